package listwatch

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// modulePath is this module's import path.
const modulePath = "github.com/apiserver-lite/apiserver-lite"

// forbiddenImports are the packages the local API must never depend on,
// directly or through another package of the module: it serves the API
// only; the doors guard it and the offline answers wrap it.
var forbiddenImports = []string{
	modulePath + "/pkg/door",
	modulePath + "/pkg/offline",
	modulePath + "/pkg/metastore",
}

// TestImportRules walks the module-internal imports of pkg/listwatch and
// its subpackages (non-test files), transitively, and fails on any
// forbidden package.
func TestImportRules(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var start []string
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			start = append(start, modulePath+"/pkg/listwatch"+strings.TrimPrefix("/"+filepath.ToSlash(path), "/."))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	via := map[string]string{} // package → the package that imported it
	queue := start
	for _, p := range start {
		via[p] = ""
	}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		for _, imp := range moduleImports(t, root, pkg) {
			if _, seen := via[imp]; !seen {
				via[imp] = pkg
				queue = append(queue, imp)
			}
		}
	}
	for _, bad := range forbiddenImports {
		for p := range via {
			if p == bad || strings.HasPrefix(p, bad+"/") {
				t.Errorf("pkg/listwatch depends on %s (imported by %s)", p, via[p])
			}
		}
	}
}

// moduleImports are the module-internal imports of pkg's non-test files.
func moduleImports(t *testing.T, root, pkg string) []string {
	t.Helper()
	dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(pkg, modulePath+"/")))
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		for _, s := range f.Imports {
			p, err := strconv.Unquote(s.Path.Value)
			if err == nil && strings.HasPrefix(p, modulePath+"/") {
				out = append(out, p)
			}
		}
	}
	return out
}
