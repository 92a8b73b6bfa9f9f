package door

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
)

// maxTokenBytes bounds the bearer tokens read (bytes); service-account
// JWTs are about 1 KiB, and a header is capped well below this anyway.
const maxTokenBytes = 16 << 10

// errNotJWT is returned for a token that is not a three-part JWT.
var errNotJWT = errors.New("token is not a JWT")

// claims are the few JWT claims read from a token, without checking its
// signature: they are only trusted for a token the cloud has already
// reviewed successfully.
type claims struct {
	// Exp is the expiry; zero when the token has none.
	Exp time.Time
	// Pod is the bound pod, empty when the token is not bound to one.
	Pod podRef
}

type podRef = offline.PodRef

type rawClaims struct {
	Exp        *json.Number `json:"exp"`
	Kubernetes *struct {
		Namespace string `json:"namespace"`
		Pod       *struct {
			Name string `json:"name"`
			UID  string `json:"uid"`
		} `json:"pod"`
	} `json:"kubernetes.io"`
}

// parseClaims reads exp and the kubernetes.io bound pod of a JWT.
func parseClaims(token string) (claims, error) {
	if len(token) > maxTokenBytes {
		return claims{}, errNotJWT
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return claims{}, errNotJWT
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return claims{}, errNotJWT
	}
	var raw rawClaims
	if err := json.Unmarshal(payload, &raw); err != nil {
		return claims{}, errNotJWT
	}
	var c claims
	if raw.Exp != nil {
		secs, err := raw.Exp.Float64()
		if err != nil || secs <= 0 || secs > maxUnixSeconds {
			return claims{}, errNotJWT
		}
		c.Exp = time.Unix(int64(secs), 0)
	}
	if k := raw.Kubernetes; k != nil && k.Pod != nil {
		c.Pod = podRef{Namespace: k.Namespace, Name: k.Pod.Name, UID: k.Pod.UID}
	}
	return c, nil
}

// maxUnixSeconds is the largest exp accepted (year 9999), keeping
// time.Unix in range.
const maxUnixSeconds = 253402300799
