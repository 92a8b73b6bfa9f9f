package listwatch

import (
	"bytes"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

func TestListItems(t *testing.T) {
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	tests := []struct {
		name string
		t    target
		raw  string
		want string
	}{
		{"built-in, sorted keys", target{gvr: configMapsGVR, info: infos[configMapsGVR]},
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`, `{"metadata":{"name":"a"}}`},
		{"built-in, other key order", target{gvr: configMapsGVR, info: infos[configMapsGVR]},
			`{"metadata":{"name":"a"},"kind":"ConfigMap","apiVersion":"v1"}`, `{"metadata":{"name":"a"}}`},
		{"custom resource keeps its type", target{gvr: widgets, info: versioncache.Info{Kind: "Widget"}},
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"}}`,
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &versioncache.Object{Raw: []byte(tc.raw)}
			got := bytes.Join(listItems(tc.t, []*versioncache.Object{obj, obj}), nil)
			if want := tc.want + "," + tc.want; string(got) != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}
