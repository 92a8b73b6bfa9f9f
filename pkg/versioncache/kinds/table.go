package kinds

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/apiserver-lite/apiserver-lite/pkg/jsonscan"
)

// Field labels every kind carries, as kube-apiserver names them.
const (
	FieldName      = "metadata.name"
	FieldNamespace = "metadata.namespace"
)

// metaFieldCount is the number of metadata fields in every field set.
const metaFieldCount = 2

// Kind is the selectable-field attributes of one kind.
type Kind struct {
	// Labels are the field labels the kind's conversion function accepts
	// unchanged, metadata ones included.
	Labels sets.Set[string]
	// Aliases maps a label the conversion function rewrites to the label
	// objects carry (a pod's deprecated spec.host is spec.nodeName).
	Aliases map[string]string
	// Refuse words the error for any other label; nil means kube's usual
	// "field label not supported: <label>".
	Refuse func(label string) error
	// Extract adds the kind's own selectable fields (not metadata.*) read
	// from the object's JSON to fs; nil for kinds with metadata fields
	// only. It must set every field it knows, empty or not, so that a
	// selector on an absent value matches as kube's does.
	Extract func(raw []byte, fs fields.Set) error
	// Read, if set, reads the kind's fields in the walk that reads the
	// object's header (jsonscan.ScanObject); Extract is then unused.
	Read *Reader
	// ExtraFields is how many fields Extract sets, to size the set.
	ExtraFields int
}

// Table maps a kind to its attributes.
type Table map[schema.GroupKind]Kind

// notSupported is the refusal most of kube's conversion functions use.
func notSupported(label string) error {
	return fmt.Errorf("field label not supported: %s", label)
}

// ConvertFieldSelector checks that every field in sel is selectable for
// gk and rewrites aliases, as kube-apiserver's ConvertFieldLabel does:
// with the kind's entry, else with runtime.DefaultMetaV1FieldSelectorConversion.
// A nil sel stays nil.
func (t Table) ConvertFieldSelector(gk schema.GroupKind, sel fields.Selector) (fields.Selector, error) {
	if sel == nil {
		return nil, nil
	}
	k, ok := t[gk]
	if !ok {
		return sel.Transform(runtime.DefaultMetaV1FieldSelectorConversion)
	}
	return sel.Transform(k.convert)
}

// convert is the kind's field label conversion function.
func (k Kind) convert(label, value string) (string, string, error) {
	if alias, ok := k.Aliases[label]; ok {
		return alias, value, nil
	}
	if k.Labels.Has(label) {
		return label, value, nil
	}
	if k.Refuse != nil {
		return "", "", k.Refuse(label)
	}
	return "", "", notSupported(label)
}

// SelectableFields returns the fields a field selector matches an object
// of kind gk against: metadata.name and metadata.namespace ("" for a
// cluster-scoped object), plus the kind's own fields read from raw.
func (t Table) SelectableFields(gk schema.GroupKind, namespace, name string, raw []byte) (fields.Set, error) {
	k := t[gk]
	fs := make(fields.Set, metaFieldCount+k.ExtraFields)
	fs[FieldName] = name
	fs[FieldNamespace] = namespace
	if k.Read != nil {
		sc, err := jsonscan.ScanAs(raw, gk, k.Read.members)
		if err == nil {
			err = sc.FieldErr()
		}
		if err != nil {
			return nil, fmt.Errorf("selectable fields of %s: %w", gk.Kind, err)
		}
		k.Read.fields(sc.Values(), sc.Name, fs)
		return fs, nil
	}
	if k.Extract == nil {
		return fs, nil
	}
	if err := k.Extract(raw, fs); err != nil {
		return nil, fmt.Errorf("selectable fields of %s: %w", gk.Kind, err)
	}
	return fs, nil
}
