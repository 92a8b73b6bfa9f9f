package offline

import "testing"

// FuzzParseRequest feeds arbitrary bodies to the TokenRequest parser,
// which reads untrusted input from local clients.
func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(requestBody("api")))
	f.Add([]byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"audiences":null}}`))
	f.Add([]byte("k8s\x00\x0a\x1b"))
	f.Fuzz(func(t *testing.T, body []byte) {
		k, err := parseRequest("ns", "sa", "application/json", body)
		if err == nil && k.storeKey() == "" {
			t.Errorf("empty store key for %q", body)
		}
	})
}
