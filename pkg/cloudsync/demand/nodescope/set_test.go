package nodescope

import (
	"slices"
	"testing"
)

func TestSet(t *testing.T) {
	p1 := Owner{Namespace: testNS, Name: "p1"}
	p2 := Owner{Namespace: testNS, Name: "p2"}
	node := Owner{Node: true, Name: "n1"}
	s := NewSet()
	steps := []struct {
		name           string
		do             func() ([]Ref, []Ref)
		added, removed []Ref
		refs           []Ref
	}{
		{"p1 references a and c", func() ([]Ref, []Ref) { return s.Update(p1, []Ref{sec("a"), cm("c"), sec("a")}) },
			[]Ref{sec("a"), cm("c")}, nil, []Ref{sec("a"), cm("c")}},
		{"p2 shares a", func() ([]Ref, []Ref) { return s.Update(p2, []Ref{sec("a"), sec("b")}) },
			[]Ref{sec("b")}, nil, []Ref{sec("a"), sec("b"), cm("c")}},
		{"p1 updated with the same refs", func() ([]Ref, []Ref) { return s.Update(p1, []Ref{cm("c"), sec("a")}) },
			nil, nil, []Ref{sec("a"), sec("b"), cm("c")}},
		{"p1 gone: a still held by p2", func() ([]Ref, []Ref) { return nil, s.Remove(p1) },
			nil, []Ref{cm("c")}, []Ref{sec("a"), sec("b")}},
		{"node config", func() ([]Ref, []Ref) { return s.Update(node, []Ref{cm("c")}) },
			[]Ref{cm("c")}, nil, []Ref{sec("a"), sec("b"), cm("c")}},
		{"p2 gone", func() ([]Ref, []Ref) { return nil, s.Remove(p2) },
			nil, []Ref{sec("a"), sec("b")}, []Ref{cm("c")}},
		{"unknown owner removed", func() ([]Ref, []Ref) { return nil, s.Remove(p1) },
			nil, nil, []Ref{cm("c")}},
		{"node config cleared", func() ([]Ref, []Ref) { return s.Update(node, nil) },
			nil, []Ref{cm("c")}, []Ref{}},
	}
	for _, st := range steps {
		added, removed := st.do()
		if !slices.Equal(added, st.added) {
			t.Errorf("%s: added got %v, want %v", st.name, added, st.added)
		}
		if !slices.Equal(removed, st.removed) {
			t.Errorf("%s: removed got %v, want %v", st.name, removed, st.removed)
		}
		if got := s.Refs(); !slices.Equal(got, st.refs) {
			t.Errorf("%s: refs got %v, want %v", st.name, got, st.refs)
		}
		for _, r := range st.refs {
			if !s.Has(r) {
				t.Errorf("%s: Has(%v) false", st.name, r)
			}
		}
	}
}
