package negotiate

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

const kubectlAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

func request(accept, query string) *http.Request {
	h := http.Header{}
	if accept != "" {
		h.Set("Accept", accept)
	}
	return &http.Request{Header: h, URL: &url.URL{RawQuery: query}}
}

func TestResource(t *testing.T) {
	const (
		js  = response.MediaTypeJSON
		pb  = response.MediaTypeProtobuf
		yml = response.MediaTypeYAML
	)
	tests := []struct {
		name      string
		accept    string
		protobuf  bool // the kind is built in
		wantType  string
		wantTable string // the Table's apiVersion; "" for none
		want406   bool
	}{
		{"no Accept", "", true, js, "", false},
		{"kubectl", kubectlAccept, true, js, "meta.k8s.io/v1", false},
		{"v1beta1 table", "application/json;as=Table;v=v1beta1;g=meta.k8s.io", true, js, "meta.k8s.io/v1beta1", false},
		{"yaml table", "application/yaml;as=Table;v=v1;g=meta.k8s.io", true, yml, "meta.k8s.io/v1", false},
		{"protobuf table skipped", "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json", true, js, "", false},
		{"protobuf table only", "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", true, "", "", true},
		{"client-go", "application/vnd.kubernetes.protobuf,application/json", true, pb, "", false},
		{"client-go for a custom resource", "application/vnd.kubernetes.protobuf,application/json", false, js, "", false},
		{"protobuf only for a custom resource", "application/vnd.kubernetes.protobuf", false, "", "", true},
		{"table of another group", "application/json;as=Table;v=v1;g=example.com", true, "", "", true},
		{"unknown stream", "application/json;stream=events", true, "", "", true},
		{"watch stream", "application/json;stream=watch", true, js, "", false},
		{"yaml stream", "application/yaml;stream=watch", true, "", "", true},
		{"server version", "application/json;sv=v2,application/yaml", true, yml, "", false},
		{"any", "*/*", true, js, "", false},
		{"any table", "*/*;as=Table;v=v1;g=meta.k8s.io", true, js, "meta.k8s.io/v1", false},
		{"metadata client, custom resource", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json", false, pb, "", false},
		{"metadata json", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1", true, js, "", false},
		{"metadata of another group", "application/json;as=PartialObjectMetadata;g=example.com;v=v1", true, "", "", true},
		{"text, custom resource", "text/plain", false, "", "", true},
		{"blank, custom resource", " ", false, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := Resource(request(tt.accept, ""), tt.protobuf, false)
			if tt.want406 {
				st := response.ToStatus(err)
				if st.Code != http.StatusNotAcceptable ||
					st.Message != "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf" {
					t.Fatalf("got %d %q, want kube's 406", st.Code, st.Message)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want %s", err, tt.wantType)
			}
			if resp.MediaType() != tt.wantType {
				t.Errorf("got media type %q, want %q", resp.MediaType(), tt.wantType)
			}
			got := ""
			if tbl := resp.Table(); tbl != nil {
				got = tbl.APIVersion
			}
			if got != tt.wantTable {
				t.Errorf("got Table %q, want %q", got, tt.wantTable)
			}
		})
	}
}

// kube's route layer (go-restful) refuses an Accept header with no exact
// media type a built-in resource's route produces, with its own message.
func TestResourceRouteLayer(t *testing.T) {
	for _, tc := range []struct {
		accept     string
		collection bool
		want       string // "" when accepted
	}{
		{"application/json;as=Table;v=v1;g=meta.k8s.io", false, ""},
		{"text/html, */*;q=0.1", false, ""},
		{"application/*", false, "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf"},
		{"text/html", true, "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf, " +
			"application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"},
	} {
		_, err := Resource(request(tc.accept, ""), true, tc.collection)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: got %v, want the route to accept it", tc.accept, err)
			}
			continue
		}
		if st := response.ToStatus(err); err == nil || st.Message != tc.want || st.Code != http.StatusNotAcceptable || st.Reason != "NotAcceptable" {
			t.Errorf("%q: got %v, want %q", tc.accept, err, tc.want)
		}
	}
}

func TestResourceTableOptions(t *testing.T) {
	for _, tc := range []struct {
		query   string
		wantErr bool
	}{
		{"", false},
		{"includeObject=Object", false},
		{"includeObject=None&noHeaders=true", false},
		{"includeObject=Bogus", true},
	} {
		resp, err := Resource(request(kubectlAccept, tc.query), true, false)
		if err != nil || resp.Table() == nil {
			t.Fatalf("%s: got %v, want a Table", tc.query, err)
		}
		if got := resp.Table().Err != nil; got != tc.wantErr {
			t.Errorf("%s: got error %v, want error %v", tc.query, resp.Table().Err, tc.wantErr)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{{"", false}, {"gzip", true}, {"deflate, gzip", true}, {"gzip;q=1", false}, {"xgzip", false}} {
		r := &http.Request{Header: http.Header{"Accept-Encoding": {tc.header}}}
		if got := acceptsGzip(r); got != tc.want {
			t.Errorf("Accept-Encoding %q: got %v, want %v", tc.header, got, tc.want)
		}
	}
}

// FuzzResource feeds arbitrary Accept headers to negotiation: it must not
// panic, and it only ever answers in a served media type, with a
// meta.k8s.io Table or PartialObjectMetadata as the only conversions, or
// kube's 406.
func FuzzResource(f *testing.F) {
	for _, seed := range []string{kubectlAccept, "", "*/*", "application/json;as=Table;v=v1;g=meta.k8s.io;q=0",
		"application/json;;;,,", `application/json;as="Table"`, "application/vnd.kubernetes.protobuf;stream=watch"} {
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, accept string, protobuf bool) {
		resp, err := Resource(request(accept, ""), protobuf, false)
		if err != nil {
			if st := response.ToStatus(err); st.Code != http.StatusNotAcceptable {
				t.Fatalf("Accept %q: got %v, want a 406", accept, err)
			}
			return
		}
		switch mt := resp.MediaType(); {
		case mt == response.MediaTypeProtobuf && ((!protobuf && resp.Partial() == nil) || resp.Table() != nil):
			t.Errorf("Accept %q: got protobuf for protobuf=%v table=%v", accept, protobuf, resp.Table() != nil)
		case mt != response.MediaTypeJSON && mt != response.MediaTypeYAML && mt != response.MediaTypeProtobuf:
			t.Errorf("Accept %q: got media type %q", accept, mt)
		}
		if tbl := resp.Table(); tbl != nil && tbl.APIVersion != "meta.k8s.io/v1" && tbl.APIVersion != "meta.k8s.io/v1beta1" {
			t.Errorf("Accept %q: got Table %q", accept, tbl.APIVersion)
		}
		if p := resp.Partial(); p != nil && (resp.Table() != nil || (p.Version != "v1" && p.Version != "v1beta1")) {
			t.Errorf("Accept %q: got PartialObjectMetadata %+v", accept, p)
		}
	})
}
