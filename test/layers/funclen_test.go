package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxCmdFuncLines is the longest a function in cmd may be (lines, from
// its signature to its closing brace): cmd holds flags, wiring and
// subcommands only, and wiring that needs more is a policy for pkg/.
const maxCmdFuncLines = 40

func TestCmdFunctionsShort(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root(t), "cmd", "*", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files under cmd: %v", err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxCmdFuncLines {
				t.Errorf("%s: %s is %d lines, want at most %d", filepath.Base(f), fd.Name.Name, n, maxCmdFuncLines)
			}
		}
	}
}
