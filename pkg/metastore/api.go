package metastore

import (
	"context"
	"errors"
)

// ErrWatermarkRegression is returned by Apply when the new watermark is
// lower than the stored one: the watermark never moves backwards.
var ErrWatermarkRegression = errors.New("watermark regression")

// ErrNotFound is returned by GetMeta for an unknown key.
var ErrNotFound = errors.New("not found")

// Object is one stored object of a resource.
type Object struct {
	Namespace string // "" for cluster-scoped objects
	Name      string
	RV        uint64 // the cloud's metadata.resourceVersion
	Raw       []byte // the JSON encoding as served
}

// Op is one change inside a batch: an upsert of Object, or, when Delete is
// set, the removal of (Object.Namespace, Object.Name).
type Op struct {
	Delete bool
	Object Object
}

// placeholder signatures; replaced by the implementation.
var _ = context.Background
