package forpods

import (
	"slices"
	"strings"
	"testing"
)

func TestParseAllowed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []string
		want    []string
		wantErr string
	}{
		{"defaults", DefaultOwners, DefaultOwners, ""},
		{"one account and a repeat", []string{"tenant/agent", "tenant/agent"}, []string{"tenant/agent"}, ""},
		{"none", nil, nil, ""},
		{"no slash", []string{"kube-system"}, nil, "want namespace/serviceaccount"},
		{"two slashes", []string{"a/b/c"}, nil, "want namespace/serviceaccount"},
		{"empty namespace", []string{"/x"}, nil, "namespace"},
		{"wildcard namespace", []string{"*/x"}, nil, "namespace"},
		{"upper case account", []string{"a/Proxy"}, nil, "service account"},
		{"empty account", []string{"a/"}, nil, "service account"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAllowed(tc.entries)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Entries(), tc.want) {
				t.Errorf("got entries %v, want %v", got.Entries(), tc.want)
			}
		})
	}
}

func TestAllowedMatches(t *testing.T) {
	a, err := ParseAllowed([]string{"kube-system/*", "tenant/agent"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ns, sa string
		want   bool
	}{
		{"kube-system", "kube-proxy", true},
		{"kube-system", "", true},
		{"tenant", "agent", true},
		{"tenant", "default", false},
		{"tenant", "", false},
		{"kube-flannel", "flannel", false},
		{"kube-system-x", "kube-proxy", false},
	} {
		if got := a.Allows(tc.ns, tc.sa); got != tc.want {
			t.Errorf("Allows(%q, %q): got %v, want %v", tc.ns, tc.sa, got, tc.want)
		}
	}
	if (Allowed{}).Allows("kube-system", "kube-proxy") {
		t.Error("got the zero Allowed allowing an owner, want none")
	}
}

func FuzzParseAllowed(f *testing.F) {
	for _, s := range []string{"kube-system/*", "a/b", "a/b/c", "/", "*/*", "a/B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAllowed([]string{s})
		if err != nil {
			return
		}
		ns, sa, _ := strings.Cut(s, "/")
		if !a.Allows(ns, sa) {
			t.Fatalf("%q parsed but does not allow itself", s)
		}
		if a.Allows(ns+"x", sa) {
			t.Fatalf("%q allows another namespace", s)
		}
	})
}
