package versioncache

import (
	"sync"

	"k8s.io/apimachinery/pkg/watch"
)

// encodings caches other encodings of one immutable Object, each computed
// at most once and kept for the Object's life. Readers of
// a filled entry take the mutex only to find it; the encoding itself runs
// outside the mutex, inside the entry's sync.Once, so a slow encode of one
// key does not block readers of another. The entries are a slice searched
// in order, not a map: an object has one key or two (protobuf, say), and
// a map costs hundreds of bytes per cached object.
type encodings struct {
	mu sync.Mutex
	s  []*encoding // guarded by mu; at most one entry per key
}

// encodingKey names one cached encoding: the caller's key ("" for JSON
// frames), plus the event type for frames ("" for objects).
type encodingKey struct {
	name string
	typ  watch.EventType
}

// encoding is one lazily computed encoding. key is immutable; b and err
// are written once inside once.Do and only read after it.
type encoding struct {
	key  encodingKey
	once sync.Once
	b    []byte
	err  error
}

// get returns the cached result for k, running encode the first time.
func (c *encodings) get(k encodingKey, encode func() ([]byte, error)) ([]byte, error) {
	e := c.entry(k)
	e.once.Do(func() {
		e.b, e.err = encode()
		e.b = exactSize(e.b)
	})
	return e.b, e.err
}

// entry returns k's entry, adding an empty one the first time.
func (c *encodings) entry(k encodingKey) *encoding {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.s {
		if e.key == k {
			return e
		}
	}
	e := &encoding{key: k}
	c.s = append(c.s, e)
	return e
}

// exactSize returns b, or a copy of it without spare capacity when b has
// any. A cached encoding lives as long as its object, and encoders that
// grow a bytes.Buffer leave up to half of it unused: copying once keeps
// the held memory to the bytes themselves.
func exactSize(b []byte) []byte {
	if cap(b) == len(b) {
		return b
	}
	return append(make([]byte, 0, len(b)), b...)
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
	if !o.caches {
		return f()
	}
	return o.encodings().get(encodingKey{name: key}, f)
}

// encodings returns o's cache, making it on first use: most objects are
// never encoded other than as JSON, so they do not carry an empty cache.
// Concurrent first callers race to install theirs; all use the winner's.
func (o *Object) encodings() *encodings {
	if c := o.enc.Load(); c != nil {
		return c
	}
	o.enc.CompareAndSwap(nil, new(encodings))
	return o.enc.Load()
}

// EncodedFrame is Frame for another wire format, named by a non-empty
// key: encode builds the frame of this event as type t, and, for an event
// delivered by a Watcher, its result is shared by every watcher as long as
// any caller holds it (see frameCache); errors are not cached. The same
// rules as for Object.Encoded apply: the result must depend only on key,
// t, Object and RV, and must not be modified.
func (e *Event) EncodedFrame(key string, t watch.EventType, encode func() ([]byte, error)) ([]byte, error) {
	s := e.shared
	if s == nil || s.obj != e.Object || s.rv != e.RV {
		return encode()
	}
	return s.frames.get(encodingKey{name: key, typ: t}, encode)
}
