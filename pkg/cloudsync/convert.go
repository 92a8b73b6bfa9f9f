package cloudsync

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// ToObject turns a cloud object into its stored form. The bytes of a
// *rawObject (from RawClient) are kept as the cloud sent them and decoded
// once; an *unstructured.Unstructured is encoded as JSON once.
func ToObject(obj runtime.Object) (*versioncache.Object, error) {
	if r, ok := obj.(*rawObject); ok {
		return rawToObject(r)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected object type %T", obj)
	}
	raw, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	o, err := versioncache.NewObject(raw)
	if err != nil {
		return nil, fmt.Errorf("decode %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return o, nil
}

// rawToObject is ToObject of a *rawObject: a watched object was decoded
// on arrival, a listed one read with its page; its bytes are copied out
// of the page unless making it made a copy already.
func rawToObject(r *rawObject) (*versioncache.Object, error) {
	if r.obj != nil || r.err != nil {
		return r.obj, r.err
	}
	var o *versioncache.Object
	var err error
	if r.scan != nil {
		o, err = versioncache.NewScannedListItem(r.Raw, r.scan, r.APIVersion, r.Kind)
	} else {
		o, err = versioncache.NewListItem(r.Raw, r.APIVersion, r.Kind)
	}
	if err != nil {
		return nil, err
	}
	if sameStart(o.Raw, r.Raw) {
		o.Raw = bytes.Clone(o.Raw)
	}
	return o, nil
}

// UpsertOp is the store operation that writes o.
func UpsertOp(o *versioncache.Object) metastore.Op {
	return metastore.Op{Object: storedObject(o)}
}

// DeleteOp is the store operation that deletes o.
func DeleteOp(o *versioncache.Object) metastore.Op {
	return metastore.Op{Delete: true, Object: storedObject(o)}
}

func storedObject(o *versioncache.Object) metastore.Object {
	return metastore.Object{Namespace: o.Namespace, Name: o.Name, RV: o.RV, Raw: o.Raw}
}

// ResourceVersionOf returns metadata.resourceVersion of a cloud object,
// such as a watch bookmark.
func ResourceVersionOf(obj runtime.Object) (uint64, error) {
	b, err := BookmarkOf(obj)
	return b.RV, err
}

// Bookmark is what a watch bookmark tells.
type Bookmark struct {
	// RV is the bookmark's resourceVersion: nothing changed up to it.
	RV uint64
	// InitialEventsEnd marks the bookmark that ends a streaming watch's
	// initial events (sendInitialEvents=true): the state sent before it is
	// the state at RV, as a LIST at RV would give it.
	InitialEventsEnd bool
}

// BookmarkOf reads a watch bookmark's resourceVersion and whether it
// ends the initial events (metav1.InitialEventsAnnotationKey).
func BookmarkOf(obj runtime.Object) (Bookmark, error) {
	var s string
	var annotations map[string]string
	if r, ok := obj.(*rawObject); ok {
		var m struct {
			Metadata struct {
				ResourceVersion string            `json:"resourceVersion"`
				Annotations     map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := utiljson.Unmarshal(r.Raw, &m); err != nil {
			return Bookmark{}, err
		}
		s, annotations = m.Metadata.ResourceVersion, m.Metadata.Annotations
	} else {
		m, err := meta.Accessor(obj)
		if err != nil {
			return Bookmark{}, err
		}
		s, annotations = m.GetResourceVersion(), m.GetAnnotations()
	}
	rv, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return Bookmark{}, fmt.Errorf("resource version %q: %w", s, err)
	}
	return Bookmark{RV: rv, InitialEventsEnd: annotations[metav1.InitialEventsAnnotationKey] == "true"}, nil
}
