package offline

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// jwtParts is the number of dot-separated parts of a signed JWT.
const jwtParts = 3

// expiration is when the token of a TokenRequest answer stops being
// accepted: the later of status.expirationTimestamp and the JWT's exp
// claim. With kube-apiserver's --service-account-extend-token-expiration
// (the default) the JWT of a projected token lives for a year while the
// status says about an hour; a copy is usable as long as the JWT is.
func expiration(body []byte) (time.Time, error) {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return time.Time{}, fmt.Errorf("decode answer: %w", err)
	}
	tr, ok := obj.(*authenticationv1.TokenRequest)
	if !ok || tr.Status.ExpirationTimestamp.IsZero() {
		return time.Time{}, errNotTokenRequest
	}
	exp := tr.Status.ExpirationTimestamp.Time
	if jwtExp, ok := jwtExpiry(tr.Status.Token); ok && jwtExp.After(exp) {
		exp = jwtExp
	}
	return exp, nil
}

// jwtExpiry reads the exp claim of a JWT without verifying it (the token
// came from the cloud); ok is false when there is none.
func jwtExpiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != jwtParts {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp *json.Number `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp == nil {
		return time.Time{}, false
	}
	sec, err := claims.Exp.Int64()
	if err != nil || sec <= 0 {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}
