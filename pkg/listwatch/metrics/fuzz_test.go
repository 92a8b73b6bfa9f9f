package metrics

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// RequestInfo parses paths from any local client: it must never panic,
// and its resource label is empty or a path segment (plus a group).
func FuzzRequestInfo(f *testing.F) {
	for _, p := range []string{"/api/v1/pods", "/apis/apps/v1/namespaces/a/deployments/d/scale", "/api/v1/namespaces//", "/apis///", "//", "/api/v1/namespaces/x"} {
		f.Add("GET", p, "watch=true")
	}
	f.Fuzz(func(t *testing.T, method, path, query string) {
		r := &http.Request{Method: method, URL: &url.URL{Path: path, RawQuery: query}}
		verb, gr := RequestInfo(r)
		if verb == "" && method != "" {
			t.Errorf("empty verb for %s %s", method, path)
		}
		res, _, _ := strings.Cut(gr, ".")
		if gr != "" && !strings.Contains(path, res) {
			t.Errorf("resource %q is not from path %q", gr, path)
		}
	})
}
