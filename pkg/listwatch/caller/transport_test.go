package caller

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// tagTransport answers with its name in a header.
type tagTransport string

func (t tagTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Via": {string(t)}}, Body: http.NoBody}, nil
}

func TestTransport(t *testing.T) {
	rt := Transport(tagTransport("daemon"))
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		wantVia string
		wantErr error
	}{
		{name: "no door", ctx: context.Background(), wantErr: errNoCaller},
		{name: "empty forwarding", ctx: WithForward(context.Background(), nil, nil), wantErr: errNoCaller},
		{name: "this node", ctx: AsNode(context.Background()), wantVia: "daemon"},
		{name: "token caller", ctx: WithForward(context.Background(), tagTransport("caller"), nil), wantVia: "caller"},
		{name: "other certificate", ctx: WithForward(context.Background(), nil, ErrNotForwardable), wantErr: ErrNotForwardable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequestWithContext(tc.ctx, "POST", "https://cloud/api/v1/namespaces/a/configmaps", nil)
			resp, err := rt.RoundTrip(req)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			if err == nil && resp.Header.Get("Via") != tc.wantVia {
				t.Fatalf("got via %q, want %q", resp.Header.Get("Via"), tc.wantVia)
			}
			for _, path := range []string{"/metrics", "/debug/pprof/heap", "/readyz"} {
				own := httptest.NewRequestWithContext(tc.ctx, "GET", "https://cloud"+path, nil)
				if _, err := rt.RoundTrip(own); !errors.Is(err, errNeverForwarded) {
					t.Fatalf("%s: got %v, want never forwarded", path, err)
				}
			}
			w := httptest.NewRecorder()
			if ok := CheckForwardable(w, req); ok != (tc.wantErr == nil) || (!ok && w.Code != http.StatusForbidden) {
				t.Fatalf("CheckForwardable: got %v with %d, want %v", ok, w.Code, tc.wantErr == nil)
			}
		})
	}
}
