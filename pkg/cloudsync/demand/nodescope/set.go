package nodescope

import (
	"cmp"
	"slices"
)

// Owner is what holds references: a pod (Namespace and Name) or the node
// itself (Node set, Name its name).
type Owner struct {
	Node      bool
	Namespace string
	Name      string
}

// Set counts, for every referenced object, the owners that reference it.
// An object belongs to the set while at least one owner references it. Not
// safe for concurrent use.
type Set struct {
	// byOwner holds each owner's current references, without duplicates.
	byOwner map[Owner][]Ref
	// count is, per referenced object, how many owners reference it;
	// never zero (the entry is removed instead).
	count map[Ref]int
}

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{byOwner: map[Owner][]Ref{}, count: map[Ref]int{}}
}

// Update replaces owner's references with refs (duplicates allowed) and
// returns the objects that entered the set and those that left it, each
// sorted. An empty refs removes owner.
func (s *Set) Update(owner Owner, refs []Ref) (added, removed []Ref) {
	refs = dedupe(refs)
	for _, r := range refs {
		if s.count[r] == 0 {
			added = append(added, r)
		}
		s.count[r]++
	}
	for _, r := range s.byOwner[owner] {
		if s.count[r]--; s.count[r] == 0 {
			delete(s.count, r)
			removed = append(removed, r)
		}
	}
	// An object both added and removed was referenced before and after.
	added, removed = cancel(added, removed)
	if len(refs) == 0 {
		delete(s.byOwner, owner)
	} else {
		s.byOwner[owner] = refs
	}
	return added, removed
}

// Remove drops owner and returns the objects that left the set, sorted.
func (s *Set) Remove(owner Owner) []Ref {
	_, removed := s.Update(owner, nil)
	return removed
}

// Has reports whether r is referenced by any owner.
func (s *Set) Has(r Ref) bool { return s.count[r] > 0 }

// Refs returns every referenced object, sorted.
func (s *Set) Refs() []Ref {
	out := make([]Ref, 0, len(s.count))
	for r := range s.count {
		out = append(out, r)
	}
	slices.SortFunc(out, compareRefs)
	return out
}

func dedupe(refs []Ref) []Ref {
	out := slices.Clone(refs)
	slices.SortFunc(out, compareRefs)
	return slices.Compact(out)
}

// cancel removes from both lists the refs they share; both come back
// sorted.
func cancel(added, removed []Ref) ([]Ref, []Ref) {
	slices.SortFunc(added, compareRefs)
	slices.SortFunc(removed, compareRefs)
	var a, r []Ref
	for _, x := range added {
		if _, found := slices.BinarySearchFunc(removed, x, compareRefs); !found {
			a = append(a, x)
		}
	}
	for _, x := range removed {
		if _, found := slices.BinarySearchFunc(added, x, compareRefs); !found {
			r = append(r, x)
		}
	}
	return a, r
}

func compareRefs(a, b Ref) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
