package listwatch

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A namespaced holding of a custom resource is served in JSON with the
// cloud's resourceVersion, never in protobuf (406, as kube-apiserver
// answers for custom resources).
func TestNamespacedAPIServesCustomResourcesInJSON(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	c := versioncache.New(gvr, 10)
	c.SetInfo(metav1.APIResource{Name: "widgets", Namespaced: true, Kind: "Widget", Group: "example.com", Version: "v1",
		Verbs: metav1.Verbs{"get", "list", "watch"}})
	o, err := versioncache.NewObject([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"namespace":"app","name":"w1","resourceVersion":"41"},"spec":{"size":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	c.Replace([]*versioncache.Object{o}, 42)
	api, err := NewForNamespace(nil, func() bool { return false }, slog.New(slog.DiscardHandler))(c, "app")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, accept string
		wantCode           int
		wantBody           []string
	}{
		{"list in JSON", "/apis/example.com/v1/namespaces/app/widgets", "application/json", http.StatusOK,
			[]string{`"kind":"WidgetList"`, `"resourceVersion":"42"`, `"name":"w1"`, `"size":3`}},
		{"get in JSON", "/apis/example.com/v1/namespaces/app/widgets/w1", "application/json", http.StatusOK,
			[]string{`"kind":"Widget"`, `"resourceVersion":"41"`}},
		{"protobuf only", "/apis/example.com/v1/namespaces/app/widgets", "application/vnd.kubernetes.protobuf", http.StatusNotAcceptable, nil},
		{"protobuf or JSON", "/apis/example.com/v1/namespaces/app/widgets", "application/vnd.kubernetes.protobuf,application/json",
			http.StatusOK, []string{`"kind":"WidgetList"`}},
		{"another namespace is the cloud's", "/apis/example.com/v1/namespaces/other/widgets", "application/json",
			http.StatusServiceUnavailable, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			req.Header.Set("Accept", tc.accept)
			rec := httptest.NewRecorder()
			api.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode {
				t.Fatalf("got %d %s, want %d", rec.Code, rec.Body.String(), tc.wantCode)
			}
			for _, w := range tc.wantBody {
				if !strings.Contains(rec.Body.String(), w) {
					t.Errorf("got body %s, want it to contain %s", rec.Body.String(), w)
				}
			}
		})
	}
}
