package encode

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// continueAPIVersion is the only continue token version kube-apiserver
// reads and writes.
const continueAPIVersion = "meta.k8s.io/v1"

// ContinueLatestRV in a token means "continue at the latest state": kube
// hands such a token out with the 410 for an expired one.
const ContinueLatestRV = -1

// Continue token errors, worded as kube-apiserver's storage package words
// them; the 400 message is "invalid continue token: " followed by one.
var (
	errInvalidStartRV             = errors.New("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	errEmptyStartKey              = errors.New("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")
	errGenericInvalidKey          = errors.New("continue key is not valid")
	errUnrecognizedEncodedVersion = errors.New("continue key is not valid: server does not recognize this encoded version")
)

// continueToken is kube-apiserver's continue token: unpadded base64url of
// this JSON. StartKey is the storage key below the list's prefix where the
// next page starts, with a leading "/".
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

// DecodeContinue parses a continue token as kube-apiserver's DecodeContinue
// does and returns the start key without its leading "/" (the form
// versioncache.PageOptions.Start takes) and the token's RV: positive for
// "exactly at", negative for "at the latest".
func DecodeContinue(token string) (start string, rv int64, err error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %v", errGenericInvalidKey, err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("%w: %v", errGenericInvalidKey, err)
	}
	if c.APIVersion != continueAPIVersion {
		return "", 0, fmt.Errorf("%w %v", errUnrecognizedEncodedVersion, c.APIVersion)
	}
	if c.ResourceVersion == 0 {
		return "", 0, errInvalidStartRV
	}
	if c.StartKey == "" {
		return "", 0, errEmptyStartKey
	}
	// Like kube, refuse keys that path.Clean would change, so a token can
	// never reach outside the list it came from.
	key := c.StartKey
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	if cleaned := path.Clean(key); cleaned != key {
		return "", 0, fmt.Errorf("%w: %v", errGenericInvalidKey, c.StartKey)
	}
	return key[1:], c.ResourceVersion, nil
}

// EncodeContinue builds the token for a next page starting at start (as
// versioncache.Page.Next gives it) at rv.
func EncodeContinue(start string, rv int64) string {
	out, _ := json.Marshal(&continueToken{APIVersion: continueAPIVersion, ResourceVersion: rv, StartKey: "/" + start}) // strings and a number always encode
	return base64.RawURLEncoding.EncodeToString(out)
}
