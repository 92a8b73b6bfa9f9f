package operations

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The plain-HTTP door's answer is the status document; an HTTPS door, any
// other status or a body that is not one is a clear error.
func TestFetchStatusPlain(t *testing.T) {
	for _, tc := range []struct {
		name     string
		code     int
		body     string
		wantNode string
		wantErr  string
	}{
		{name: "ok", code: http.StatusOK, body: `{"source":"daemon","node":"n1","link":"up"}`, wantNode: "n1"},
		{name: "https door", code: http.StatusBadRequest, body: httpsDoorAnswer + ".\n", wantErr: "it serves HTTPS; pass --kubeconfig"},
		{name: "refused", code: http.StatusForbidden, body: "no", wantErr: "status 403"},
		{name: "not a document", code: http.StatusOK, body: "<html>", wantErr: "decode status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != PathStatus {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			doc, err := FetchStatusPlain(context.Background(), srv.Listener.Addr().String())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error about %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || doc.Node != tc.wantNode {
				t.Fatalf("got %+v, %v; want node %q", doc, err, tc.wantNode)
			}
		})
	}
}
