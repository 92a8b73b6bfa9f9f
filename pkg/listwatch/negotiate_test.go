package listwatch

import (
	"net/http"
	"testing"
)

func TestNegotiation(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	const (
		js = contentTypeJSON
		pb = mediaTypeProtobuf
	)
	// want is the answer of the resource paths (a built-in kind), wantDisc
	// that of discovery, which is JSON only.
	tests := []struct {
		name           string
		accept         []string
		want, wantDisc int
		wantType       string // resource paths' Content-Type on 200
	}{
		{"no Accept", nil, 200, 200, js},
		{"any", []string{"*/*"}, 200, 200, js},
		{"any application", []string{"application/*"}, 200, 200, js},
		{"json", []string{"application/json"}, 200, 200, js},
		{"json with charset", []string{"application/json; charset=utf-8"}, 200, 200, js},
		{"protobuf first", []string{"application/vnd.kubernetes.protobuf,application/json"}, 200, 200, pb},
		{"json first", []string{"application/json,application/vnd.kubernetes.protobuf"}, 200, 200, js},
		{"json preferred by quality", []string{"application/vnd.kubernetes.protobuf;q=0.5,application/json"}, 200, 200, js},
		{"kubectl table", []string{"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"}, 200, 200, js},
		{"table only", []string{"application/json;as=Table;v=v1;g=meta.k8s.io"}, 200, 200, js},
		{"protobuf table, then json", []string{"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json"}, 200, 200, js},
		{"browser", []string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, 200, 200, js},
		{"repeated header", []string{"application/vnd.kubernetes.protobuf", "application/json"}, 200, 200, pb},
		{"protobuf only", []string{"application/vnd.kubernetes.protobuf"}, 200, 406, pb},
		{"protobuf watch only", []string{"application/vnd.kubernetes.protobuf;stream=watch"}, 200, 406, pb},
		{"protobuf refused", []string{"application/vnd.kubernetes.protobuf;q=0"}, 406, 406, ""},
		{"html only", []string{"text/html"}, 406, 406, ""},
		{"yaml only", []string{"application/yaml"}, 406, 406, ""},
		{"json refused", []string{"application/json;q=0"}, 406, 406, ""},
		{"garbage", []string{";;;"}, 406, 406, ""},
	}
	for _, tt := range tests {
		for _, path := range []string{"/api/v1/pods", "/api/v1/namespaces/default/pods/web-1", "/api/v1"} {
			t.Run(tt.name+" "+path, func(t *testing.T) {
				want, wantType := tt.want, tt.wantType
				if path == "/api/v1" {
					want, wantType = tt.wantDisc, js
				}
				r := MustDo(t, http.MethodGet, srv.URL+path, http.Header{"Accept": tt.accept}, "")
				if r.code != want {
					t.Fatalf("got status %d, want %d", r.code, want)
				}
				if want != http.StatusOK {
					st := MustStatus(t, r)
					if st.Reason != "NotAcceptable" {
						t.Errorf("got reason %q, want NotAcceptable", st.Reason)
					}
					return
				}
				if got := r.header.Get("Content-Type"); got != wantType {
					t.Errorf("got Content-Type %q, want %q", got, wantType)
				}
			})
		}
	}
}
