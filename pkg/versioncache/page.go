package versioncache

import (
	"errors"
	"slices"
	"sort"
)

// ErrFutureRV is returned by ListPage for an RV above the cache RV; callers
// wait with WaitForRV first.
var ErrFutureRV = errors.New("resource version not reached yet")

// PageOptions selects one page of a list.
type PageOptions struct {
	Predicate Predicate
	// RV is the resourceVersion to list at exactly; 0 means the current
	// state. An older RV is served by rolling the event ring back, so it
	// must not be older than the oldest RV a watch can start from.
	RV uint64
	// Start skips objects whose key sorts before it. An object's key is
	// "<namespace>/<name>", or just "<name>" when Predicate.Namespace is
	// set or the object has no namespace: the part of kube-apiserver's
	// storage key below the list's prefix, compared byte-wise.
	Start string
	// Limit is the most objects to return; 0 or less means all.
	Limit int64
}

// Page is one page of a list.
type Page struct {
	// Objects match the predicate, in key order. Never nil; the Objects
	// are shared and must not be modified.
	Objects []*Object
	// RV is the resourceVersion the page was listed at.
	RV uint64
	// Next is non-empty when the limit was reached with objects left: the
	// Start of the next page (the last key followed by a NUL byte, as
	// kube-apiserver builds it).
	Next string
	// Remaining counts the objects after this page, matching or not; it
	// equals the matching ones only without label and field selectors.
	Remaining int64
}

// ListPage lists one page of the state at opts.RV (the current one when 0),
// matching opts.Predicate, from opts.Start on. An RV older than a watch
// could start from yields a *TooOldError, one above the cache RV
// ErrFutureRV, and it returns ErrNotReady before Replace.
func (c *Cache) ListPage(opts PageOptions) (Page, error) {
	m := newMatcher(opts.Predicate)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready {
		return Page{}, ErrNotReady
	}
	pg := Page{Objects: []*Object{}, RV: c.rv}
	var past map[objKey]*Object
	if opts.RV != 0 && opts.RV != c.rv {
		if opts.RV > c.rv {
			return Page{}, ErrFutureRV
		}
		if oldest := c.oldestLocked(); opts.RV < oldest {
			return Page{}, &TooOldError{Requested: opts.RV, Oldest: oldest}
		}
		past, pg.RV = c.pastLocked(opts.RV), opts.RV
	}
	cur := newCursor(&c.state, past, opts.Predicate.Namespace, opts.Start)
	for o := cur.next(); o != nil; o = cur.next() {
		if m.matches(o) {
			pg.Objects = append(pg.Objects, o)
		}
		if opts.Limit > 0 && int64(len(pg.Objects)) >= opts.Limit {
			if left := cur.remaining(); left > 0 {
				pg.Next, pg.Remaining = cur.relKey(keyOf(o))+"\x00", left
			}
			break
		}
	}
	return pg, nil
}

// pastLocked returns, for every key an event after rv touched, its object
// at rv (nil if it did not exist then): the Prev of its first such event.
// mu must be held.
func (c *Cache) pastLocked(rv uint64) map[objKey]*Object {
	past := make(map[objKey]*Object)
	for i := c.ring.firstAfter(rv); i < c.ring.len(); i++ {
		e := c.ring.at(i)
		k := keyOf(e.Object)
		if _, seen := past[k]; !seen {
			past[k] = e.Prev
		}
	}
	return past
}

// cursor walks a state as it was at an older RV, in key order: the
// current entries with past's objects in place of theirs (skipping those
// that did not exist), merged with past's objects no longer current.
// Always: cur and extra are sorted by key and i, j index their next
// unvisited elements.
type cursor struct {
	allNS bool // keys carry the namespace
	cur   []*entry
	extra []*Object
	past  map[objKey]*Object
	i, j  int
}

func newCursor(s *state, past map[objKey]*Object, namespace, start string) *cursor {
	c := &cursor{allNS: namespace == "", cur: s.span(namespace), past: past}
	for k, o := range past {
		if o != nil && s.byKey[k] == nil && (namespace == "" || k.namespace == namespace) {
			c.extra = append(c.extra, o)
		}
	}
	slices.SortFunc(c.extra, func(a, b *Object) int { return compareKeys(keyOf(a), keyOf(b)) })
	if start != "" {
		c.i = sort.Search(len(c.cur), func(i int) bool { return c.relKey(c.cur[i].key) >= start })
		c.j = sort.Search(len(c.extra), func(j int) bool { return c.relKey(keyOf(c.extra[j])) >= start })
	}
	return c
}

// relKey is k as PageOptions.Start compares it.
func (c *cursor) relKey(k objKey) string {
	if c.allNS && k.namespace != "" {
		return k.namespace + string(keySeparator) + k.name
	}
	return k.name
}

// next returns the next object that existed at the cursor's RV, or nil.
func (c *cursor) next() *Object {
	for c.i < len(c.cur) || c.j < len(c.extra) {
		if c.j < len(c.extra) && (c.i == len(c.cur) || compareKeys(keyOf(c.extra[c.j]), c.cur[c.i].key) < 0) {
			c.j++
			return c.extra[c.j-1]
		}
		e := c.cur[c.i]
		c.i++
		o, changed := c.past[e.key]
		if !changed {
			return e.obj
		}
		if o != nil {
			return o
		}
	}
	return nil
}

// remaining counts the objects next would still return, without walking
// them: the unvisited entries, less those absent at the RV, plus the
// unvisited extras.
func (c *cursor) remaining() int64 {
	n := int64(len(c.cur)-c.i) + int64(len(c.extra)-c.j)
	if c.i == len(c.cur) {
		return n
	}
	from := c.cur[c.i].key
	for k, o := range c.past {
		if o == nil && c.inCur(k) && compareKeys(k, from) >= 0 {
			n--
		}
	}
	return n
}

// inCur reports whether k is a current entry of the cursor's span.
func (c *cursor) inCur(k objKey) bool {
	_, found := slices.BinarySearchFunc(c.cur, k, func(e *entry, k objKey) int { return compareKeys(e.key, k) })
	return found
}
