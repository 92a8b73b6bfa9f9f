package encode

import (
	"bytes"
	"encoding/json"

	"k8s.io/client-go/kubernetes/scheme"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// listItems returns the parts that encode objs as the items of a list of
// res. Like kube-apiserver, the items of a built-in kind's list carry no
// kind or apiVersion (a typed list encodes its items without TypeMeta);
// those of other kinds (CRDs, served as unstructured) keep them. Clients
// notice: client-go's watch-list consistency detector compares list items
// with watched objects, whose TypeMeta its decoder clears.
func listItems(res Resource, objs []*versioncache.Object) [][]byte {
	parts := make([][]byte, 0, 3*len(objs))
	if !scheme.Scheme.Recognizes(res.GroupVersionKind()) {
		for i, o := range objs {
			if i > 0 {
				parts = append(parts, comma)
			}
			parts = append(parts, o.Raw)
		}
		return parts
	}
	prefix := typeMetaPrefix(res.Kind, res.APIVersion())
	for i, o := range objs {
		if i > 0 {
			parts = append(parts, comma)
		}
		parts = append(parts, withoutTypeMeta(o.Raw, prefix)...)
	}
	return parts
}

// typeMetaPrefix is how an object encoded with sorted keys (as
// unstructured objects marshal) begins: {"apiVersion":..,"kind":..,
func typeMetaPrefix(kind, apiVersion string) []byte {
	b := []byte(`{"apiVersion":`)
	b = appendJSONString(b, apiVersion)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, kind)
	return append(b, ',')
}

var openBrace = []byte{'{'}

// withoutTypeMeta returns raw without its top-level kind and apiVersion.
// Objects that start with prefix cost no copy; others are re-encoded.
func withoutTypeMeta(raw, prefix []byte) [][]byte {
	if bytes.HasPrefix(raw, prefix) {
		return [][]byte{openBrace, raw[len(prefix):]}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return [][]byte{raw} // cached objects are valid JSON; keep as is
	}
	delete(m, "kind")
	delete(m, "apiVersion")
	b, err := json.Marshal(m)
	if err != nil {
		return [][]byte{raw}
	}
	return [][]byte{b}
}
