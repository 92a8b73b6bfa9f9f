package kinds

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/jsonscan"
)

// The table's Readers name their fields with jsonscan's paths.
type (
	path = jsonscan.Path
	// Values are the values a Reader read, by slot.
	Values = jsonscan.Values
)

var (
	obj     = jsonscan.Obj
	str     = jsonscan.Str
	boolean = jsonscan.Bool
	int32Of = jsonscan.Int32
	strPtr  = jsonscan.StrPtr
	first   = jsonscan.First
)

// Reader reads a kind's selectable fields in the same walk as the object
// header: jsonscan decodes the top-level members it names as kube decodes
// them into the kind's Go type, and fields turns the values into the
// field set.
type Reader struct {
	members []path
	fields  func(v *Values, name string, fs fields.Set)
}

// Paths is what jsonscan reads for objects of gk: its Reader's members,
// nil for a kind without one. It makes the table a jsonscan.Kinds.
func (t Table) Paths(gk schema.GroupKind) jsonscan.Paths {
	if rd := t[gk].Read; rd != nil {
		return rd.members
	}
	return nil
}

// ScanObject is jsonscan.ScanObject reading the table's fields.
func (t Table) ScanObject(raw []byte, apiVersion, kind string) (jsonscan.Scan, error) {
	return jsonscan.ScanObject(raw, apiVersion, kind, t)
}

// ReadList is jsonscan.ReadList reading the table's fields of each item.
func (t Table) ReadList(body []byte) (jsonscan.List, error) {
	return jsonscan.ReadList(body, t)
}

// Fields returns the fields a field selector matches the scanned object
// against, as SelectableFields does; raw is the object's JSON, read again
// only by a kind of the table without a Reader.
func (t Table) Fields(sc *jsonscan.Scan, raw []byte) (fields.Set, error) {
	gk := sc.GroupKindOf()
	k := t[gk]
	fs := make(fields.Set, metaFieldCount+k.ExtraFields)
	fs[FieldName] = sc.Name
	fs[FieldNamespace] = sc.Namespace
	var err error
	switch {
	case k.Read != nil && sc.FieldErr() != nil:
		err = sc.FieldErr()
	case k.Read != nil:
		k.Read.fields(sc.Values(), sc.Name, fs)
	case k.Extract != nil:
		err = k.Extract(raw, fs)
	}
	if err != nil {
		return nil, fmt.Errorf("selectable fields of %s: %w", gk.Kind, err)
	}
	return fs, nil
}
