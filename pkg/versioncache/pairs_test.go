package versioncache

import (
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

func TestPairsGet(t *testing.T) {
	p := MustPairs(t, map[string]string{
		"app": "web", "empty": "", "a.b/c": "x=y,z", "zz": "last", "": "empty key",
	})
	tests := []struct {
		key     string
		wantHas bool
		want    string
	}{
		{"app", true, "web"},
		{"empty", true, ""},
		{"a.b/c", true, "x=y,z"},
		{"zz", true, "last"},
		{"", true, "empty key"},
		{"missing", false, ""},
		{"ap", false, ""},
		{"appx", false, ""},
		{"zzz", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := p.Has(tt.key); got != tt.wantHas {
				t.Errorf("got Has %v, want %v", got, tt.wantHas)
			}
			if got := p.Get(tt.key); got != tt.want {
				t.Errorf("got Get %q, want %q", got, tt.want)
			}
			v, ok := p.Lookup(tt.key)
			if v != tt.want || ok != tt.wantHas {
				t.Errorf("got Lookup %q, %v, want %q, %v", v, ok, tt.want, tt.wantHas)
			}
		})
	}
	if got, want := p.Len(), 5; got != want {
		t.Errorf("got Len %d, want %d", got, want)
	}
}

func TestPairsMatchesLikeSets(t *testing.T) {
	tests := []struct {
		name string
		m    map[string]string
	}{
		{"nil", nil},
		{"empty value", map[string]string{"app": ""}},
		{"several", map[string]string{"app": "web", "tier": "front", "zone": "a"}},
	}
	selectors := []string{"", "app", "!app", "app=web", "app!=web", "app=", "tier in (front,back)", "zone notin (a)", "app,tier=front"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := MustPairs(t, tt.m)
			if got, want := p.String(), labels.Set(tt.m).String(); got != want {
				t.Errorf("got String %q, want %q", got, want)
			}
			if got, want := maps.Collect(p.All()), tt.m; len(got) != len(want) || !maps.Equal(got, want) {
				t.Errorf("got All %v, want %v", got, want)
			}
			for _, s := range selectors {
				sel := MustLabelSelector(t, s)
				if got, want := sel.Matches(p), sel.Matches(labels.Set(tt.m)); got != want {
					t.Errorf("label selector %q: got %v, want %v", s, got, want)
				}
				fs, err := fields.ParseSelector(s)
				if err != nil {
					continue // set-based syntax is labels only
				}
				if got, want := fs.Matches(p), fs.Matches(fields.Set(tt.m)); got != want {
					t.Errorf("field selector %q: got %v, want %v", s, got, want)
				}
			}
		})
	}
}
