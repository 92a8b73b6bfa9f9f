package offline

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// tokenPath matches the TokenRequest subresource of a service account.
var tokenPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/serviceaccounts/([^/]+)/token$`)

var errNotTokenRequest = errors.New("body is not a TokenRequest")

// requestKey identifies a TokenRequest: namespace, service account,
// audiences, bound object, requested expiration, and the media type the
// answer was asked in.
type requestKey struct {
	Namespace, ServiceAccount string
	Audiences                 []string
	BoundKind, BoundName      string
	BoundUID                  string
	ExpirationSeconds         int64
	Accept                    string
}

// parseRequest decodes a TokenRequest body (JSON or protobuf).
func parseRequest(ns, sa, accept string, body []byte) (requestKey, error) {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return requestKey{}, fmt.Errorf("decode token request: %w", err)
	}
	tr, ok := obj.(*authenticationv1.TokenRequest)
	if !ok {
		return requestKey{}, errNotTokenRequest
	}
	k := requestKey{Namespace: ns, ServiceAccount: sa, Audiences: tr.Spec.Audiences, Accept: accept}
	if tr.Spec.ExpirationSeconds != nil {
		k.ExpirationSeconds = *tr.Spec.ExpirationSeconds
	}
	if b := tr.Spec.BoundObjectRef; b != nil {
		k.BoundKind, k.BoundName, k.BoundUID = b.Kind, b.Name, string(b.UID)
	}
	return k, nil
}

// storeKey is the key (after TokenRequestPrefix) under which k's answer is stored: the bound UID,
// then a digest of every field (so that no field, however long or odd,
// can make two requests collide).
func (k requestKey) storeKey() string {
	parts := []string{k.Namespace, k.ServiceAccount, strings.Join(k.Audiences, "\x00"), k.BoundKind, k.BoundName,
		k.BoundUID, strconv.FormatInt(k.ExpirationSeconds, 10), k.Accept}
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p)) + ":" + p))
	}
	return k.BoundUID + "/" + hex.EncodeToString(h.Sum(nil))
}
