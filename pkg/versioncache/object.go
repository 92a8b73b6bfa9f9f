package versioncache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-lite/apiserver-lite/pkg/jsonscan"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache/kinds"
)

// NewObject decodes raw JSON into an Object, extracting namespace, name,
// resourceVersion, uid, labels and the selectable fields of its kind, as
// kinds.Builtin defines them. Object keys are matched case-sensitively, as
// kube-apiserver does. raw is kept as given; the caller must not modify it
// afterwards.
//
// It fails on invalid JSON, a missing metadata.name, a missing, zero or
// non-decimal metadata.resourceVersion, and a selectable field of the
// wrong type.
func NewObject(raw []byte) (*Object, error) {
	return newObject(kinds.Builtin, raw)
}

// NewListItem is NewObject for an item of a list, whose apiVersion and
// kind a server may leave out (kube-apiserver does for built-in kinds):
// when raw lacks them, apiVersion and kind, the list's, are inserted at the
// front of a copy of raw, so the stored bytes always carry them. raw is
// decoded once.
func NewListItem(raw []byte, apiVersion, kind string) (*Object, error) {
	return newListItem(kinds.Builtin, raw, apiVersion, kind)
}

// NewTypedObject is NewObject that also returns the apiVersion and kind
// raw carries, read in the same walk.
func NewTypedObject(raw []byte) (*Object, metav1.TypeMeta, error) {
	return newTypedObject(kinds.Builtin, raw, "", "")
}

// newObject is NewObject with the attributes table t.
func newObject(t kinds.Table, raw []byte) (*Object, error) {
	return newListItem(t, raw, "", "")
}

// newListItem is NewListItem with the attributes table t. raw is read in
// one walk that validates it and reads the header and the kind's fields.
func newListItem(t kinds.Table, raw []byte, apiVersion, kind string) (*Object, error) {
	o, _, err := newTypedObject(t, raw, apiVersion, kind)
	return o, err
}

// newTypedObject is newListItem also returning the apiVersion and kind
// raw carries.
func newTypedObject(t kinds.Table, raw []byte, apiVersion, kind string) (*Object, metav1.TypeMeta, error) {
	h, err := t.ScanObject(raw, apiVersion, kind)
	tm := metav1.TypeMeta{APIVersion: h.APIVersion, Kind: h.Kind}
	if err != nil {
		return nil, tm, fmt.Errorf("decode object: %w", err)
	}
	o, err := build(t, raw, &h, apiVersion, kind)
	return o, tm, err
}

// NewScannedListItem is NewListItem of an item kinds.Builtin.ReadList has
// read: raw is one of its Items, h the matching Scan, apiVersion the
// list's and kind its ItemKind. raw is not read again.
func NewScannedListItem(raw []byte, h *jsonscan.Scan, apiVersion, kind string) (*Object, error) {
	if err := h.Err(); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	return build(kinds.Builtin, raw, h, apiVersion, kind)
}

// build makes the Object of raw, which t read into h.
func build(t kinds.Table, raw []byte, h *jsonscan.Scan, apiVersion, kind string) (*Object, error) {
	if !h.Metadata || h.Name == "" {
		return nil, errors.New("decode object: missing metadata.name")
	}
	if (h.APIVersion == "" && apiVersion != "") || (h.Kind == "" && kind != "") {
		raw = withTypeMeta(raw, h, apiVersion, kind)
	} else {
		raw = typeMetaFirst(raw, h)
	}
	rv, err := parseRV(h.ResourceVersion)
	if err != nil {
		return nil, fmt.Errorf("decode object %s: %w", h.Name, err)
	}
	fs, err := t.Fields(h, raw)
	if err != nil {
		return nil, fmt.Errorf("decode object %s: %w", h.Name, err)
	}
	fields, err := PairsOf(fs)
	if err != nil {
		return nil, fmt.Errorf("decode object %s: %w", h.Name, err)
	}
	labels, err := PairsOf(h.Labels)
	if err != nil {
		return nil, fmt.Errorf("decode object %s: %w", h.Name, err)
	}
	return &Object{
		Namespace: h.Namespace,
		Name:      h.Name,
		RV:        rv,
		UID:       h.UID,
		Raw:       raw,
		Labels:    labels,
		Fields:    fields,
		caches:    true,
	}, nil
}

// withTypeMeta returns a copy of the JSON object raw, which has a
// metadata.name so is not empty, with the apiVersion and kind that h lacks
// inserted first, and sets them in h.
func withTypeMeta(raw []byte, h *jsonscan.Scan, apiVersion, kind string) []byte {
	var prefix []byte
	if h.APIVersion == "" && apiVersion != "" {
		prefix = appendMember(prefix, "apiVersion", apiVersion)
		h.APIVersion = apiVersion
	}
	if h.Kind == "" && kind != "" {
		prefix = appendMember(prefix, "kind", kind)
		h.Kind = kind
	}
	body := bytes.TrimLeft(raw, " \t\r\n")[1:] // after the '{'
	out := make([]byte, 0, 1+len(prefix)+len(body))
	out = append(out, '{')
	out = append(out, prefix...)
	return append(out, body...)
}

// typeMetaFirst returns raw, or a copy with its leading kind and
// apiVersion members swapped when it begins {"kind":..,"apiVersion":..,
// as kube-apiserver encodes watched objects: every stored object of a
// built-in kind then begins {"apiVersion":..,"kind":.., which is what the
// LIST writer strips without re-encoding the object.
func typeMetaFirst(raw []byte, h *jsonscan.Scan) []byte {
	if h.Kind == "" || h.APIVersion == "" {
		return raw
	}
	if !bytes.HasPrefix(raw, watchOrder) {
		return raw
	}
	swapped := appendMember(appendMember([]byte{'{'}, "kind", h.Kind), "apiVersion", h.APIVersion)
	if !bytes.HasPrefix(raw, swapped) {
		return raw
	}
	out := appendMember(appendMember(make([]byte, 1, len(raw)), "apiVersion", h.APIVersion), "kind", h.Kind)
	out[0] = '{'
	return append(out, raw[len(swapped):]...)
}

// watchOrder begins an object whose kind comes before its apiVersion.
var watchOrder = []byte(`{"kind":`)

// appendMember appends "key":value, (a JSON string member and a comma).
func appendMember(b []byte, key, value string) []byte {
	k, _ := json.Marshal(key) // a string always encodes
	v, _ := json.Marshal(value)
	b = append(b, k...)
	b = append(b, ':')
	b = append(b, v...)
	return append(b, ',')
}

// parseRV parses a stored object's resourceVersion: a positive decimal
// integer. Zero is rejected because no stored object carries it.
func parseRV(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("missing metadata.resourceVersion")
	}
	rv, err := strconv.ParseUint(s, 10, 64)
	if err != nil || rv == 0 {
		return 0, fmt.Errorf("invalid metadata.resourceVersion %q", s)
	}
	return rv, nil
}
