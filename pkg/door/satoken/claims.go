package satoken

import (
	"errors"
	"fmt"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// maxTokenBytes bounds the tokens parsed (bytes); service-account JWTs
// are about 1 KiB.
const maxTokenBytes = 16 << 10

// signatureAlgorithms are the algorithms kube-apiserver signs
// service-account tokens with (RS256 for RSA keys, ES256/384/512 for
// ECDSA keys); a token with any other is not verified here.
var signatureAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.ES384, jose.ES512}

// errNotJWT is returned for a token that is not a signed compact JWT.
var errNotJWT = errors.New("token is not a signed JWT")

// privateClaims is kube's "kubernetes.io" claim layout
// (k8s.io/kubernetes pkg/serviceaccount/claims.go).
type privateClaims struct {
	Kubernetes kubernetesClaims `json:"kubernetes.io,omitempty"`
}

type kubernetesClaims struct {
	Namespace string `json:"namespace,omitempty"`
	Svcacct   ref    `json:"serviceaccount,omitempty"`
	Pod       *ref   `json:"pod,omitempty"`
	Secret    *ref   `json:"secret,omitempty"`
	Node      *ref   `json:"node,omitempty"`
}

type ref struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// parsed is a token parsed without checking its signature: its claims
// are trusted only after verify.
type parsed struct {
	tok     *jwt.JSONWebToken
	kid     string
	public  jwt.Claims
	private privateClaims
}

// parse reads a compact JWS with one of signatureAlgorithms and its
// claims, unverified.
func parse(token string) (parsed, error) {
	if len(token) > maxTokenBytes {
		return parsed{}, errNotJWT
	}
	tok, err := jwt.ParseSigned(token, signatureAlgorithms)
	if err != nil {
		return parsed{}, fmt.Errorf("%w: %w", errNotJWT, err)
	}
	p := parsed{tok: tok}
	for _, h := range tok.Headers {
		if h.KeyID != "" {
			p.kid = h.KeyID
			break
		}
	}
	if err := tok.UnsafeClaimsWithoutVerification(&p.public, &p.private); err != nil {
		return parsed{}, fmt.Errorf("%w: %w", errNotJWT, err)
	}
	return p, nil
}

// verify checks p's signature with key and reads its claims again from
// the verified payload.
func (p *parsed) verify(key any) error {
	var public jwt.Claims
	var private privateClaims
	if err := p.tok.Claims(key, &public, &private); err != nil {
		return err
	}
	p.public, p.private = public, private
	return nil
}
