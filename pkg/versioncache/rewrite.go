package versioncache

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// WithRV returns a copy of o whose RV and metadata.resourceVersion are rv.
// Raw is decoded and re-encoded as kube-apiserver would (integers kept
// exactly, keys sorted). It is used only for synthesized DELETED events, so
// the cost stays off the common path.
func (o *Object) WithRV(rv uint64) (*Object, error) {
	if o == nil {
		return nil, errors.New("set resourceVersion: nil object")
	}
	var m map[string]any
	if err := utiljson.Unmarshal(o.Raw, &m); err != nil {
		return nil, fmt.Errorf("set resourceVersion of %s/%s: %w", o.Namespace, o.Name, err)
	}
	if m == nil {
		return nil, fmt.Errorf("set resourceVersion of %s/%s: not a JSON object", o.Namespace, o.Name)
	}
	err := unstructured.SetNestedField(m, strconv.FormatUint(rv, 10), "metadata", "resourceVersion")
	if err != nil {
		return nil, fmt.Errorf("set resourceVersion of %s/%s: %w", o.Namespace, o.Name, err)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("set resourceVersion of %s/%s: %w", o.Namespace, o.Name, err)
	}
	// o's encodings are of the old Raw: the copy starts with none.
	return &Object{Namespace: o.Namespace, Name: o.Name, RV: rv, UID: o.UID, Raw: raw,
		Labels: o.Labels, Fields: o.Fields, caches: true}, nil
}
