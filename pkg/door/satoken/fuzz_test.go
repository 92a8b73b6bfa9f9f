package satoken

import (
	"context"
	"testing"
)

// FuzzVerify feeds arbitrary tokens to the parser and the checks: any
// input is refused or verified, never a panic.
func FuzzVerify(f *testing.F) {
	f.Add("")
	f.Add("a.b.c")
	f.Add("eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJpc3MiOiJ4In0.c2ln")
	f.Add("eyJhbGciOiJFUzI1NiJ9.eyJrdWJlcm5ldGVzLmlvIjp7InBvZCI6bnVsbH19.")
	v := New(Config{NodeName: testNode, Audiences: []string{testAudience}})
	f.Fuzz(func(t *testing.T, token string) {
		if id, err := v.Verify(context.Background(), token, false); err == nil {
			t.Fatalf("verified %q with no keys as %+v", token, id)
		}
	})
}

// FuzzParseKeySet feeds arbitrary key sets (the cloud's answer is
// untrusted input too).
func FuzzParseKeySet(f *testing.F) {
	f.Add([]byte(`{"keys":[]}`))
	f.Add([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		set, err := parseKeySet(raw)
		if err == nil && len(set.Keys) == 0 {
			t.Fatalf("no error and no key for %q", raw)
		}
	})
}
