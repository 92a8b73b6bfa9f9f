package versioncache

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache/kinds"
	"k8s.io/apimachinery/pkg/labels"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// objectHeader is the part of every object NewObject decodes itself; the
// kind's selectable fields are read by its entry in the kinds table.
type objectHeader struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Metadata   *objectMeta `json:"metadata"`
}

type objectMeta struct {
	Namespace       string            `json:"namespace"`
	Name            string            `json:"name"`
	ResourceVersion string            `json:"resourceVersion"`
	Labels          map[string]string `json:"labels"`
}

// NewObject decodes raw JSON into an Object, extracting namespace, name,
// resourceVersion, labels and the selectable fields of its kind, as
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

// newObject is NewObject with the attributes table t.
func newObject(t kinds.Table, raw []byte) (*Object, error) {
	var h objectHeader
	if err := utiljson.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	if h.Metadata == nil || h.Metadata.Name == "" {
		return nil, errors.New("decode object: missing metadata.name")
	}
	m := h.Metadata
	rv, err := parseRV(m.ResourceVersion)
	if err != nil {
		return nil, fmt.Errorf("decode object %s: %w", m.Name, err)
	}
	fs, err := t.SelectableFields(kinds.GroupKind(h.APIVersion, h.Kind), m.Namespace, m.Name, raw)
	if err != nil {
		return nil, fmt.Errorf("decode object %s: %w", m.Name, err)
	}
	return &Object{
		Namespace: m.Namespace,
		Name:      m.Name,
		RV:        rv,
		Raw:       raw,
		Labels:    labels.Set(m.Labels),
		Fields:    fs,
		enc:       new(encodings),
	}, nil
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
