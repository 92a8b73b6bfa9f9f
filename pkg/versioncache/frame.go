package versioncache

import (
	"encoding/json"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/watch"
)

// Fixed parts of a JSON watch frame: {"type":T,"object":O}\n.
const (
	framePrefix = `{"type":`
	frameMiddle = `,"object":`
	frameSuffix = "}\n"
)

// eventShared is what every copy of one applied Event shares: its encoded
// frames and, built at most once, the Deleted event a watcher gets when the
// object stops matching its predicate. It is always true that every Event
// pointing to an eventShared has Object == obj and RV == rv; Frame checks
// this, so a caller editing a copy's fields gets a fresh encoding instead
// of a wrong cached one.
type eventShared struct {
	obj *Object
	rv  uint64
	// frames caches the JSON frames (key name "") and those in other wire
	// formats (see EncodedFrame), without keeping them alive.
	frames frameCache

	goneOnce sync.Once
	gone     Event // written once inside goneOnce.Do
}

func newShared(obj *Object, rv uint64) *eventShared {
	return &eventShared{obj: obj, rv: rv}
}

// Frame returns the newline-terminated JSON watch frame
// {"type":T,"object":Raw}. For an event delivered by a Watcher, each type's
// frame is shared: while any caller still holds it, the same bytes are
// returned to every watcher (see frameCache), so callers must not modify
// them. A progress marker (nil Object) encodes as
// {"metadata":{"resourceVersion":"RV"}} without kind or apiVersion; HTTP
// handlers that know the kind build their own bookmark objects.
func (e *Event) Frame(t watch.EventType) []byte {
	s := e.shared
	if s == nil || s.obj != e.Object || s.rv != e.RV {
		return encodeFrame(t, e)
	}
	b, _ := s.frames.get(encodingKey{typ: t}, func() ([]byte, error) { return encodeFrame(t, e), nil })
	return b // encodeFrame cannot fail
}

func encodeFrame(t watch.EventType, e *Event) []byte {
	typ := quoteType(t)
	obj := frameObject(e)
	b := make([]byte, 0, len(framePrefix)+len(typ)+len(frameMiddle)+len(obj)+len(frameSuffix))
	b = append(b, framePrefix...)
	b = append(b, typ...)
	b = append(b, frameMiddle...)
	b = append(b, obj...)
	return append(b, frameSuffix...)
}

func frameObject(e *Event) []byte {
	switch {
	case e.Object == nil:
		b := []byte(`{"metadata":{"resourceVersion":`)
		b = strconv.AppendQuote(b, strconv.FormatUint(e.RV, 10))
		return append(b, "}}"...)
	case len(e.Object.Raw) == 0:
		return []byte("null")
	}
	return e.Object.Raw
}

// quoteType returns t as a JSON string.
func quoteType(t watch.EventType) string {
	switch t {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error:
		return `"` + string(t) + `"`
	}
	b, _ := json.Marshal(string(t)) // marshaling a string cannot fail
	return string(b)
}

// deletedFromPrev returns the Deleted event a watcher gets when e's object
// stops matching its predicate: e.Prev carrying e's RV, as kube's
// cacheWatcher.convertToWatchEvent sends. It is built once per applied
// event and shared, frames included, by every watcher that needs it.
func (e *Event) deletedFromPrev() Event {
	s := e.shared
	if s == nil {
		return buildDeletedFromPrev(e)
	}
	s.goneOnce.Do(func() { s.gone = buildDeletedFromPrev(e) })
	return s.gone
}

func buildDeletedFromPrev(e *Event) Event {
	obj, err := e.Prev.WithRV(e.RV)
	if err != nil {
		// Raw that cannot be rewritten never comes from NewObject. Sending
		// the old bytes with the right Event.RV beats dropping the delete,
		// which would leave the client with an object that is gone.
		p := e.Prev
		obj = &Object{Namespace: p.Namespace, Name: p.Name, RV: e.RV, UID: p.UID, Raw: p.Raw,
			Labels: p.Labels, Fields: p.Fields, caches: p.caches}
	}
	return Event{Type: watch.Deleted, RV: e.RV, Object: obj, Prev: e.Prev, shared: newShared(obj, e.RV)}
}
