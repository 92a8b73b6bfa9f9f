package versioncache

import (
	"cmp"
	"slices"
	"strings"
)

// objKey identifies an object within one resource.
type objKey struct {
	namespace, name string
}

func keyOf(o *Object) objKey {
	return objKey{namespace: o.Namespace, name: o.Name}
}

// compareKeys orders keys as kube-apiserver's storage keys
// "<namespace>/<name>" sort byte-wise, so lists and continue tokens follow
// its order: namespace "a-b" sorts before "a" because '-' < '/'.
func compareKeys(a, b objKey) int {
	if a.namespace != b.namespace {
		return compareNamespaces(a.namespace, b.namespace)
	}
	return cmp.Compare(a.name, b.name)
}

// keySeparator ends the namespace part of a storage key.
const keySeparator = '/'

// compareNamespaces compares a+"/" with b+"/" without building them.
func compareNamespaces(a, b string) int {
	n := min(len(a), len(b))
	if c := strings.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	switch {
	case len(a) < len(b):
		return cmp.Compare(keySeparator, b[n])
	case len(a) > len(b):
		return cmp.Compare(a[n], keySeparator)
	}
	return 0
}

// entry is one current object. It holds no encoded frames, so the state
// costs one Raw per object however many watches started from it.
type entry struct {
	key objKey
	obj *Object
}

// state is the current objects of a resource, indexed by key and kept
// sorted by key (see compareKeys), so lists need no sort and a namespace is
// one contiguous range. byKey and sorted always hold the same entries. A
// state is not safe for concurrent use; Cache.mu guards it.
type state struct {
	byKey  map[objKey]*entry
	sorted []*entry
	// bytes is the sum of the current objects' Raw lengths.
	bytes int64
}

// newState builds a state from objs. Nil objects are skipped; of two
// objects with the same key, the later wins.
func newState(objs []*Object) state {
	sorted := make([]*entry, 0, len(objs))
	for _, o := range objs {
		if o != nil {
			sorted = append(sorted, &entry{key: keyOf(o), obj: o})
		}
	}
	slices.SortStableFunc(sorted, func(a, b *entry) int { return compareKeys(a.key, b.key) })
	byKey := make(map[objKey]*entry, len(sorted))
	out := sorted[:0]
	for _, e := range sorted {
		if n := len(out); n > 0 && out[n-1].key == e.key {
			out[n-1] = e
		} else {
			out = append(out, e)
		}
		byKey[e.key] = e
	}
	clear(sorted[len(out):])
	var n int64
	for _, e := range out {
		n += int64(len(e.obj.Raw))
	}
	return state{byKey: byKey, sorted: out, bytes: n}
}

func (s *state) get(k objKey) *Object {
	if e := s.byKey[k]; e != nil {
		return e.obj
	}
	return nil
}

// put stores o and returns the object it replaced, or nil.
func (s *state) put(o *Object) *Object {
	k := keyOf(o)
	s.bytes += int64(len(o.Raw))
	if e := s.byKey[k]; e != nil {
		prev := e.obj
		e.obj = o
		s.bytes -= int64(len(prev.Raw))
		return prev
	}
	e := &entry{key: k, obj: o}
	i, _ := s.search(k)
	s.sorted = slices.Insert(s.sorted, i, e)
	s.byKey[k] = e
	return nil
}

// remove deletes the object at k and returns it, or nil if absent.
func (s *state) remove(k objKey) *Object {
	e := s.byKey[k]
	if e == nil {
		return nil
	}
	delete(s.byKey, k)
	s.bytes -= int64(len(e.obj.Raw))
	if i, found := s.search(k); found {
		s.sorted = slices.Delete(s.sorted, i, i+1)
	}
	return e.obj
}

// search returns the index of the first entry not before k.
func (s *state) search(k objKey) (int, bool) {
	return slices.BinarySearchFunc(s.sorted, k, func(e *entry, k objKey) int { return compareKeys(e.key, k) })
}

// span returns the sorted entries in namespace (all of them for ""). The
// result aliases s.sorted and is valid only while the lock is held.
func (s *state) span(namespace string) []*entry {
	if namespace == "" {
		return s.sorted
	}
	lo, _ := s.search(objKey{namespace: namespace})
	rest := s.sorted[lo:]
	// Entries in rest are in namespace first, then in later namespaces.
	n, _ := slices.BinarySearchFunc(rest, namespace, func(e *entry, ns string) int {
		if e.key.namespace == ns {
			return -1
		}
		return 1
	})
	return rest[:n]
}
