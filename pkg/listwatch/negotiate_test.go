package listwatch

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

func TestNegotiation(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	const (
		js  = response.MediaTypeJSON
		pb  = response.MediaTypeProtobuf
		yml = response.MediaTypeYAML
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
		// kube's route layer (go-restful) wants an exact media type or */*.
		{"any application", []string{"application/*"}, 406, 200, ""},
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
		// kube-apiserver's negotiation ignores the quality beyond ordering.
		{"protobuf q=0", []string{"application/vnd.kubernetes.protobuf;q=0"}, 200, 406, pb},
		{"html only", []string{"text/html"}, 406, 406, ""},
		{"yaml only", []string{"application/yaml"}, 200, 406, yml},
		{"json q=0", []string{"application/json;q=0"}, 200, 406, js},
		{"protobuf table only", []string{"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"}, 406, 406, ""},
		{"unknown conversion", []string{"application/json;as=Foo;v=v1;g=meta.k8s.io"}, 406, 200, ""},
		{"watch stream json", []string{"application/json;stream=watch"}, 200, 200, js},
		{"garbage", []string{";;;"}, 406, 406, ""},
	}
	// The route layer answers these with go-restful's message.
	routeText := map[string]bool{"any application": true, "html only": true, "garbage": true}
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
				if want != http.StatusOK && routeText[tt.name] && path != "/api/v1" {
					wantBody := "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf"
					if path == "/api/v1/pods" {
						wantBody += ", application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
					}
					if st := MustStatus(t, r); st.Message != wantBody || st.Reason != "NotAcceptable" {
						t.Errorf("got %q %q, want go-restful's %q", st.Reason, st.Message, wantBody)
					}
					return
				}
				if want != http.StatusOK {
					st := MustStatus(t, r)
					if st.Reason != "NotAcceptable" {
						t.Errorf("got reason %q, want NotAcceptable", st.Reason)
					}
					wantMsg := "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
					if path == "/api/v1" {
						wantMsg = "only the following media types are accepted: application/json"
					}
					if st.Message != wantMsg {
						t.Errorf("got message %q, want %q", st.Message, wantMsg)
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

// A watch in a media type without a stream framing (YAML) gets kube's
// 406 listing the stream media types; a get or list gets YAML.
func TestNegotiationYAML(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	yml := http.Header{"Accept": {response.MediaTypeYAML}}
	r := MustDo(t, http.MethodGet, srv.URL+"/api/v1/namespaces/default/pods/web-1", yml, "")
	if r.code != http.StatusOK || r.header.Get("Content-Type") != response.MediaTypeYAML ||
		!strings.Contains(r.body, "kind: Pod\n") || !strings.Contains(r.body, "name: web-1\n") {
		t.Errorf("get: got %d %q %q, want 200 YAML of the pod", r.code, r.header.Get("Content-Type"), r.body)
	}
	r = MustDo(t, http.MethodGet, srv.URL+"/api/v1/namespaces/default/pods/missing", yml, "")
	if r.code != http.StatusNotFound || r.header.Get("Content-Type") != response.MediaTypeYAML ||
		!strings.Contains(r.body, "reason: NotFound\n") {
		t.Errorf("get missing: got %d %q %q, want 404 with a YAML Status", r.code, r.header.Get("Content-Type"), r.body)
	}
	// kube answers this 406 in the negotiated YAML too.
	r = MustDo(t, http.MethodGet, srv.URL+"/api/v1/pods?watch=true", yml, "")
	var st metav1.Status
	if err := yaml.Unmarshal([]byte(r.body), &st); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
	const want = "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
	if r.code != http.StatusNotAcceptable || st.Message != want {
		t.Errorf("watch: got %d %q, want 406 %q", r.code, st.Message, want)
	}
}

// Invalid Table options are answered as kube-apiserver does: after the
// read, so a missing object is still a 404.
func TestNegotiationTableOptionsOrder(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	tbl := http.Header{"Accept": {kubectlAccept}}
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/api/v1/namespaces/default/pods/web-1?includeObject=Bogus", http.StatusBadRequest},
		{"/api/v1/namespaces/default/pods/missing?includeObject=Bogus", http.StatusNotFound},
		{"/api/v1/pods?includeObject=Bogus", http.StatusBadRequest},
		{"/api/v1/pods?watch=1&includeObject=Bogus", http.StatusBadRequest},
	} {
		if r := MustDo(t, http.MethodGet, srv.URL+tc.path, tbl, ""); r.code != tc.want {
			t.Errorf("%s: got %d %s, want %d", tc.path, r.code, r.body, tc.want)
		}
	}
}

// Bodies over 128 KiB are gzipped for a client that accepts it, as
// kube-apiserver does; smaller ones are not.
func TestNegotiationGzip(t *testing.T) {
	f := newFixture(t)
	big := strings.Repeat("x", 200*1024)
	MustApply(t, f.pods, 21, watch.Added, podJSON("default", "big", 21, "node-a", "Running", map[string]string{"big": big}))
	srv := MustServer(t, Config{Caches: f.caches()})
	for _, tc := range []struct {
		name, path string
		gzip       bool
	}{
		{"small", "/api/v1/namespaces/default/pods/web-1", false},
		{"large", "/api/v1/pods", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Setting Accept-Encoding turns off the transport's
			// transparent decompression, so the raw encoding is seen.
			r := MustDo(t, http.MethodGet, srv.URL+tc.path, http.Header{"Accept-Encoding": {"gzip"}}, "")
			if got := r.header.Get("Content-Encoding") == "gzip"; got != tc.gzip || r.code != http.StatusOK {
				t.Errorf("got %d gzip=%v, want 200 gzip=%v", r.code, got, tc.gzip)
			}
		})
	}
}
