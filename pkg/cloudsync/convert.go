package cloudsync

import (
	"fmt"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// toObject encodes a cloud object as JSON once; the same bytes are stored
// and served.
func toObject(obj runtime.Object) (*versioncache.Object, error) {
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

func upsertOp(o *versioncache.Object) metastore.Op {
	return metastore.Op{Object: storedObject(o)}
}

func deleteOp(o *versioncache.Object) metastore.Op {
	return metastore.Op{Delete: true, Object: storedObject(o)}
}

func storedObject(o *versioncache.Object) metastore.Object {
	return metastore.Object{Namespace: o.Namespace, Name: o.Name, RV: o.RV, Raw: o.Raw}
}
