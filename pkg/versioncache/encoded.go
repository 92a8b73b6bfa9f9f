package versioncache

import (
	"sync"

	"k8s.io/apimachinery/pkg/watch"
)

// encodings caches other encodings of one immutable value (an Object, or
// the frames of an applied Event), each computed at most once. Readers of
// a filled entry take the mutex only to find it; the encoding itself runs
// outside the mutex, inside the entry's sync.Once, so a slow encode of one
// key does not block readers of another.
type encodings struct {
	mu sync.Mutex
	m  map[encodingKey]*encoding
}

// encodingKey names one cached encoding: the caller's key, plus the event
// type for frames ("" for objects).
type encodingKey struct {
	name string
	typ  watch.EventType
}

// encoding is one lazily computed encoding. b and err are written once
// inside once.Do and only read after it.
type encoding struct {
	once sync.Once
	b    []byte
	err  error
}

// get returns the cached result for k, running encode the first time.
func (c *encodings) get(k encodingKey, encode func() ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[encodingKey]*encoding, 1)
	}
	e, ok := c.m[k]
	if !ok {
		e = &encoding{}
		c.m[k] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.b, e.err = encode() })
	return e.b, e.err
}

// Encoded returns another encoding of o (for example protobuf), named by
// key: encode is called with o.Raw the first time a key is asked for, and
// its result, error included, is returned to every later caller, from any
// goroutine. Since an Object never changes, neither does its encoding:
// callers must not modify the returned bytes, and must pass, for one key,
// an encode function whose result depends only on Raw. Objects not made by
// NewObject (or WithRV) do not cache: encode runs on every call.
func (o *Object) Encoded(key string, encode func(raw []byte) ([]byte, error)) ([]byte, error) {
	f := func() ([]byte, error) { return encode(o.Raw) }
	if o.enc == nil {
		return f()
	}
	return o.enc.get(encodingKey{name: key}, f)
}

// EncodedFrame is Frame for another wire format, named by key: encode
// builds the frame of this event as type t, and, for an event delivered by
// a Watcher, runs once per key and type, its result shared by every
// watcher. The same rules as for Object.Encoded apply: the result must
// depend only on key, t, Object and RV, and must not be modified.
func (e *Event) EncodedFrame(key string, t watch.EventType, encode func() ([]byte, error)) ([]byte, error) {
	s := e.shared
	if s == nil || s.obj != e.Object || s.rv != e.RV {
		return encode()
	}
	return s.alt.get(encodingKey{name: key, typ: t}, encode)
}
