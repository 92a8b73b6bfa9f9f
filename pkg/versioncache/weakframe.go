package versioncache

import (
	"sync"
	"unsafe"
	"weak"
)

// frameCache caches the encoded frames of one applied event, in every
// wire format and event type, without keeping them alive: an entry is a
// weak pointer to the frame's bytes. While any watcher holds a frame (to
// write it), every other watcher gets the same bytes; once none does, the
// collector frees it and the next caller, typically a watch replaying the
// ring, encodes it again. So the event ring holds objects, not a copy of
// each object per frame: the frames of the watch-cache-size events of a
// ring would otherwise double the memory of its changed objects.
type frameCache struct {
	mu sync.Mutex
	s  []weakFrame // guarded by mu; at most one entry per key
}

// weakFrame is one cached frame.
type weakFrame struct {
	key encodingKey
	b   weakBytes
}

// get returns the live frame for k, or encodes and caches it. encode runs
// with mu held, so concurrent callers of one event encode it once.
func (c *frameCache) get(k encodingKey, encode func() ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := 0
	for i < len(c.s) && c.s[i].key != k {
		i++
	}
	if i < len(c.s) {
		if b := c.s[i].b.value(); b != nil {
			return b, nil
		}
	}
	b, err := encode()
	if err != nil {
		return nil, err
	}
	if i == len(c.s) {
		c.s = append(c.s, weakFrame{key: k})
	}
	c.s[i].b = makeWeakBytes(b)
	return b, nil
}

// weakBytes refers to a byte slice without keeping it alive. Always: p is
// nil, or it was made from &b[0] of a slice b with len(b) == n, so while p
// still yields a pointer, that pointer keeps all n bytes alive.
type weakBytes struct {
	p weak.Pointer[byte]
	n int
}

func makeWeakBytes(b []byte) weakBytes {
	if len(b) == 0 {
		return weakBytes{}
	}
	return weakBytes{p: weak.Make(&b[0]), n: len(b)}
}

// value returns the bytes, or nil once they were collected.
func (w weakBytes) value() []byte {
	p := w.p.Value()
	if p == nil {
		return nil
	}
	return unsafe.Slice(p, w.n) // see the invariant on weakBytes
}
