package caller

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
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

// headerTransport answers with the impersonation headers it was sent.
type headerTransport struct{}

func (headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h := http.Header{"X-User": r.Header.Values("Impersonate-User"), "X-Groups": r.Header.Values("Impersonate-Group")}
	return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody}, nil
}

func TestTransportImpersonatesNode(t *testing.T) {
	rt := Transport(headerTransport{})
	for _, tc := range []struct {
		name       string
		ctx        context.Context
		wantUser   string
		wantGroups []string
	}{
		{name: "as the daemon", ctx: AsNode(context.Background())},
		{name: "as the node", ctx: AsNodeImpersonating(context.Background(), User{Name: "system:node:n1", Groups: []string{"system:nodes"}}),
			wantUser: "system:node:n1", wantGroups: []string{"system:nodes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequestWithContext(tc.ctx, "PATCH", "https://cloud/api/v1/nodes/n1/status", nil)
			req.Header.Set("Impersonate-Group", "system:masters") // never passed on as the node's
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Header.Get("X-User"); got != tc.wantUser {
				t.Errorf("Impersonate-User: got %q, want %q", got, tc.wantUser)
			}
			if tc.wantUser != "" && !slices.Equal(resp.Header.Values("X-Groups"), tc.wantGroups) {
				t.Errorf("Impersonate-Group: got %q, want %q", resp.Header.Values("X-Groups"), tc.wantGroups)
			}
			if rt, err := ForwardTransport(tc.ctx); rt != nil || err != nil {
				t.Errorf("ForwardTransport: got %v, %v; want the daemon's (nil, nil)", rt, err)
			}
		})
	}
}
