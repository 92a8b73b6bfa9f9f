package versioncache

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// DefaultCapacity is the default number of events kept per resource
// (--watch-cache-size). It matches kube-apiserver's historical default.
const DefaultCapacity = 1000

// ErrNotReady is returned by reads of a cache that has neither been loaded
// from the metastore nor filled by a first cloud list.
var ErrNotReady = errors.New("cache not ready")

// ErrRVRegression is returned by Apply when a batch would move the cache's
// resourceVersion backwards or carries events out of RV order.
var ErrRVRegression = errors.New("resource version regression")

// ErrClosed is returned by Watch after Close.
var ErrClosed = errors.New("cache closed")

// ErrInvalidEvent is returned by Apply when an event has no object, an
// unknown type, or an RV that differs from its object's RV.
var ErrInvalidEvent = errors.New("invalid event")

// TooOldError is returned by Watch when the requested resourceVersion is
// older than the oldest one the event ring can serve. Its message is exactly
// kube-apiserver's: "too old resource version: N (M)".
type TooOldError struct {
	Requested uint64 // the RV the client asked to watch from
	Oldest    uint64 // the oldest RV a watch can start from
}

func (e *TooOldError) Error() string {
	return fmt.Sprintf("too old resource version: %d (%d)", e.Requested, e.Oldest)
}

// Object is one immutable version of a cached object. It is never mutated
// after construction and is shared by the current state, the event ring and
// every watcher.
type Object struct {
	Namespace string
	Name      string
	// RV is metadata.resourceVersion as the cloud assigned it.
	RV uint64
	// UID is metadata.uid, "" when the object has none.
	UID string
	// Raw is the JSON encoding, including apiVersion and kind, whose
	// metadata.resourceVersion equals RV.
	Raw []byte
	// Labels are metadata.labels.
	Labels Pairs
	// Fields holds every field a field selector may name for this kind:
	// metadata.name and metadata.namespace always, plus the kind's own
	// fields as the kinds table defines them.
	Fields Pairs

	// enc caches other encodings of Raw (see Encoded): nil until the
	// first Encoded call, then set once and never changed.
	enc atomic.Pointer[encodings]
	// caches is set by NewObject and WithRV: objects built otherwise do
	// not cache their encodings.
	caches bool
}

// Event is one change to a resource. Events are immutable once applied.
type Event struct {
	// Type is watch.Added, watch.Modified or watch.Deleted. Progress
	// markers that only advance the RV have type watch.Bookmark and a nil
	// Object.
	Type watch.EventType
	// RV is the event's resourceVersion: Object.RV, or the new RV for a
	// progress marker.
	RV uint64
	// Object is the new state; for Deleted, the last state carrying the
	// delete's RV.
	Object *Object
	// Prev is the state before this event (nil for Added). Apply fills it.
	Prev *Object

	// shared caches the encoded frames of Object. Every copy of one
	// applied Event, and every event the cache derives from it with the
	// same Object, points to the same value; nil for events built by
	// callers. See frame.go.
	shared *eventShared
}

// Predicate selects objects. A zero Predicate matches everything.
type Predicate struct {
	Namespace string          // "" means all namespaces
	Label     labels.Selector // nil means everything
	Field     fields.Selector // nil means everything
}

// Info is discovery information for a cached resource.
type Info = metav1.APIResource

// GVR is the cached resource's identity.
type GVR = schema.GroupVersionResource

// WaitFunc is used by readers that must wait for the cache to reach a
// resourceVersion.
type WaitFunc func(ctx context.Context, rv uint64) error
