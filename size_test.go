package seckill_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Bounds of the service's production code: a file has one job and a
// function reads on one screen.
const (
	maxFileLines = 450
	maxFuncLines = 60
)

// productionGo lists the service's production Go files: not tests, and not
// the test tooling (e2e, internal/testkit, loadtest).
func productionGo(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (path == "e2e" || path == "loadtest" || path == filepath.Join("internal", "testkit") || strings.HasPrefix(d.Name(), ".")) && path != ".":
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestFilesAndFunctionsStayShort: no production file is over 450 lines and
// no production function over 60.
// Can fail: a file or a function that grows past its bound.
func TestFilesAndFunctionsStayShort(t *testing.T) {
	fset := token.NewFileSet()
	for _, path := range productionGo(t) {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
			t.Errorf("%s: %d lines, over %d: split it along its jobs", path, n, maxFileLines)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: func %s is %d lines, over %d", path, fn.Name.Name, n, maxFuncLines)
			}
		}
	}
}
