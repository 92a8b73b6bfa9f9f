package startup

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// env is a real store in a test's own directory.
type env struct{ store *metastore.Store }

func mustEnv(t *testing.T, dir string) *env {
	t.Helper()
	st, err := metastore.Open(context.Background(), filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return &env{store: st}
}

// configmaps names the configmaps of namespace ns, as a syncer keys them.
func configmaps(ns string) Resource {
	key := "/v1/configmaps"
	if ns != "" {
		key += "?namespace=" + ns
	}
	return Resource{GVR: cmGVR, Key: key, InfoKey: "info/" + key}
}

func cm(ns, name string, rv uint64, data string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": ns, "name": name, "resourceVersion": strconv.FormatUint(rv, 10)},
		"data":     map[string]any{"v": data},
	}}
}

func mustObject(t *testing.T, u *unstructured.Unstructured) *versioncache.Object {
	t.Helper()
	raw, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	o, err := versioncache.NewObject(raw)
	if err != nil {
		t.Fatalf("object: %v", err)
	}
	return o
}

func storedObject(o *versioncache.Object) metastore.Object {
	return metastore.Object{Namespace: o.Namespace, Name: o.Name, RV: o.RV, Raw: o.Raw}
}
