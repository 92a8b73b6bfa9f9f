package encode

import (
	"bytes"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

func TestListItems(t *testing.T) {
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	tests := []struct {
		name string
		res  Resource
		raw  string
		want string
	}{
		{"built-in, sorted keys", Resource{GVR: configMaps, Kind: "ConfigMap"},
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`, `{"metadata":{"name":"a"}}`},
		{"built-in, other key order", Resource{GVR: configMaps, Kind: "ConfigMap"},
			`{"metadata":{"name":"a"},"kind":"ConfigMap","apiVersion":"v1"}`, `{"metadata":{"name":"a"}}`},
		{"custom resource keeps its type", Resource{GVR: widgets, Kind: "Widget"},
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"}}`,
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &versioncache.Object{Raw: []byte(tc.raw)}
			got := bytes.Join(listItems(tc.res, []*versioncache.Object{obj, obj}), nil)
			if want := tc.want + "," + tc.want; string(got) != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}
