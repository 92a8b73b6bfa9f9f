package listwatch

import (
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache/kinds"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// convertFieldSelector checks that every field in sel is selectable for
// kind and rewrites aliases, as kube-apiserver's ConvertFieldLabel does.
// It reads the same attributes table versioncache extracts object fields
// with, so a field accepted here is always one objects carry.
func convertFieldSelector(sel fields.Selector, kind schema.GroupKind) (fields.Selector, error) {
	return kinds.Builtin.ConvertFieldSelector(kind, sel)
}
