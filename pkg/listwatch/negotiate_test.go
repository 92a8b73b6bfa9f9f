package listwatch

import (
	"net/http"
	"testing"
)

func TestNegotiation(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	tests := []struct {
		name   string
		accept []string
		want   int
	}{
		{"no Accept", nil, 200},
		{"any", []string{"*/*"}, 200},
		{"any application", []string{"application/*"}, 200},
		{"json", []string{"application/json"}, 200},
		{"json with charset", []string{"application/json; charset=utf-8"}, 200},
		{"protobuf first", []string{"application/vnd.kubernetes.protobuf,application/json"}, 200},
		{"kubectl table", []string{"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"}, 200},
		{"table only", []string{"application/json;as=Table;v=v1;g=meta.k8s.io"}, 200},
		{"browser", []string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, 200},
		{"repeated header", []string{"application/vnd.kubernetes.protobuf", "application/json"}, 200},
		{"protobuf only", []string{"application/vnd.kubernetes.protobuf"}, 406},
		{"protobuf watch only", []string{"application/vnd.kubernetes.protobuf;stream=watch"}, 406},
		{"html only", []string{"text/html"}, 406},
		{"yaml only", []string{"application/yaml"}, 406},
		{"json refused", []string{"application/json;q=0"}, 406},
		{"garbage", []string{";;;"}, 406},
	}
	for _, tt := range tests {
		for _, path := range []string{"/api/v1/pods", "/api/v1/namespaces/default/pods/web-1", "/api/v1"} {
			t.Run(tt.name+" "+path, func(t *testing.T) {
				r := MustDo(t, http.MethodGet, srv.URL+path, http.Header{"Accept": tt.accept}, "")
				if r.code != tt.want {
					t.Fatalf("got status %d, want %d", r.code, tt.want)
				}
				if tt.want != http.StatusOK {
					st := MustStatus(t, r)
					if st.Reason != "NotAcceptable" {
						t.Errorf("got reason %q, want NotAcceptable", st.Reason)
					}
					return
				}
				if got := r.header.Get("Content-Type"); got != contentTypeJSON {
					t.Errorf("got Content-Type %q, want %q", got, contentTypeJSON)
				}
			})
		}
	}
}
