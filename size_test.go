package seckill_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bounds of the project's non-test Go code (the service, its test kit and
// its load tools): a file has one job and a function reads on one screen.
const (
	maxFileLines = 450
	maxFuncLines = 60
)

// productionGo lists the project's non-test Go files: the service, the test
// kit (internal/testkit) and the load tools (loadtest), which a maintainer
// reads as often as the service. Only _test.go files and the e2e suite stay
// out.
func productionGo(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (path == "e2e" || strings.HasPrefix(d.Name(), ".")) && path != ".":
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

// longToolFuncs are the test kit's and the load tools' functions that were
// over maxFuncLines when the size test first covered them, each with its
// length then as its ceiling: they may shrink, not grow, and an entry goes
// once its function fits (the test says so). Keyed "path:func".
var longToolFuncs = map[string]int{
	"internal/testkit/chaos/campaign.go:Run":    121,
	"internal/testkit/chaos/check.go:check":     98,
	"internal/testkit/chaos/cluster.go:build":   100,
	"internal/testkit/chaos/faults.go:schedule": 66,
	"loadtest/crowd/main.go:run":                79,
	"loadtest/crowd/room.go:runRoom":            72,
	"loadtest/crowd/roomreport.go:report":       156,
	"loadtest/crowd/roomuser.go:live":           132,
	"loadtest/roommem/main.go:run":              102,
}

// TestFilesAndFunctionsStayShort: no non-test file of the service, the test
// kit or the load tools is over 450 lines and no function there over 60
// (the tools' longToolFuncs over their recorded length).
// Can fail: a file or a function that grows past its bound.
func TestFilesAndFunctionsStayShort(t *testing.T) {
	fset := token.NewFileSet()
	seen := map[string]bool{}
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
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			key := filepath.ToSlash(path) + ":" + fn.Name.Name
			ceiling, listed := longToolFuncs[key]
			seen[key] = listed
			switch {
			case listed && n <= maxFuncLines:
				t.Errorf("%s: func %s is %d lines now, within %d: remove %q from longToolFuncs", path, fn.Name.Name, n, maxFuncLines, key)
			case listed && n > ceiling:
				t.Errorf("%s: func %s is %d lines, over its recorded %d (and the bound %d): shorten it", path, fn.Name.Name, n, ceiling, maxFuncLines)
			case !listed && n > maxFuncLines:
				t.Errorf("%s: func %s is %d lines, over %d", path, fn.Name.Name, n, maxFuncLines)
			}
		}
	}
	for key := range longToolFuncs {
		if !seen[key] {
			t.Errorf("longToolFuncs: %q names no function any more: remove it", key)
		}
	}
}

// TestEveryFileStaysShort: no file of code, tests and scripts included (Go,
// Lua, shell), is over maxFileLines: a test file that grows past it holds
// several jobs' tests, as a source file would. The dated records under
// loadtest/history are prose, not code.
// Can fail: a test file or a script that grows past the bound.
func TestEveryFileStaysShort(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (strings.HasPrefix(d.Name(), ".") || path == "loadtest/history") && path != ".":
			return filepath.SkipDir
		case d.IsDir():
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".lua", ".sh":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := bytes.Count(b, []byte("\n")); n > maxFileLines {
			t.Errorf("%s: %d lines, over %d: split it along its jobs", path, n, maxFileLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
