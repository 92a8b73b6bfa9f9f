// Package layers checks the import rules between the project's packages:
// data flows one way, the leaves import nothing of the project's, and the
// local API never imports the doors.
package layers

import (
	"go/build"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const module = "github.com/apiserver-lite/apiserver-lite/"

// root is the module's directory, two levels above this file.
func root(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// deps returns every package of the project that pkg (a path below the
// module) imports, directly or not, tests excluded.
func deps(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		bp, err := build.Default.Import(module+p, root(t), 0)
		if err != nil {
			t.Fatalf("import %s: %v", p, err)
		}
		for _, imp := range bp.Imports {
			if rel, ok := strings.CutPrefix(imp, module); ok && !seen[rel] {
				seen[rel] = true
				walk(rel)
			}
		}
	}
	walk(pkg)
	return seen
}

func TestImportRules(t *testing.T) {
	for _, tc := range []struct {
		pkg string
		// allowed lists the only project packages pkg may reach, directly
		// or not (nil: no rule); forbidden those it must not reach.
		allowed   []string
		forbidden []string
	}{
		{pkg: "pkg/jsonscan", allowed: []string{}},
		{pkg: "pkg/metastore", allowed: []string{"pkg/jsonscan"}},
		{pkg: "pkg/versioncache/kinds", allowed: []string{"pkg/jsonscan"}},
		{pkg: "pkg/versioncache", allowed: []string{"pkg/versioncache/kinds", "pkg/jsonscan"}},
		{pkg: "pkg/door/satoken", allowed: []string{}},
		{pkg: "pkg/listwatch/caller", forbidden: []string{"pkg/door", "pkg/offline", "pkg/holding", "pkg/cloudsync", "pkg/metastore"}},
		{pkg: "pkg/cloudsync/link", forbidden: []string{"pkg/metastore", "pkg/versioncache"}},
		{pkg: "pkg/listwatch", forbidden: []string{"pkg/door", "pkg/offline", "pkg/metastore", "pkg/cloudsync", "pkg/holding", "pkg/pool"}},
		{pkg: "pkg/cloudsync", forbidden: []string{"pkg/listwatch", "pkg/door", "pkg/holding", "pkg/pool"}},
		{pkg: "pkg/pool", forbidden: []string{"pkg/listwatch", "pkg/holding", "pkg/door"}},
		{pkg: "pkg/holding", forbidden: []string{"pkg/pool"}},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			got := deps(t, tc.pkg)
			if tc.allowed != nil {
				for d := range got {
					if !contains(tc.allowed, d) {
						t.Errorf("%s imports %s, want only %v", tc.pkg, d, tc.allowed)
					}
				}
			}
			for _, f := range tc.forbidden {
				for d := range got {
					if d == f || strings.HasPrefix(d, f+"/") {
						t.Errorf("%s imports %s, want nothing of %s", tc.pkg, d, f)
					}
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}
