package redisacl_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill/internal/redisacl"
)

// listed is one package of `go list -json`, what this test reads of it.
type listed struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	EmbedFiles []string
	Module     *struct{ Main bool }
}

// serviceBinary are the packages linked into the service's binary, with
// their export data: the code that can send a command to Redis.
func serviceBinary(t *testing.T) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-export", "-json=ImportPath,Dir,Export,GoFiles,EmbedFiles,Module", "github.com/seckill-oss/seckill/cmd/seckill")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// redisCall is a redis.call or redis.pcall with the command named by a
// string literal, and anyCall any of them: the two must count alike.
var (
	redisCall = regexp.MustCompile(`redis\.p?call\(\s*['"]([A-Za-z]+)['"]`)
	anyCall   = regexp.MustCompile(`redis\.p?call\s*\(`)
)

// scriptCommands are the commands the embedded .lua files run, by command,
// where.
func scriptCommands(t *testing.T, pkgs []listed) map[string][]string {
	t.Helper()
	found := map[string][]string{}
	files := 0
	for _, p := range pkgs {
		for _, f := range p.EmbedFiles {
			if !strings.EqualFold(filepath.Ext(f), ".lua") {
				continue
			}
			files++
			path := filepath.Join(p.Dir, f)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			calls := redisCall.FindAllSubmatch(src, -1)
			if n := len(anyCall.FindAll(src, -1)); n != len(calls) {
				t.Errorf("%s: %d redis.call/pcall, %d of them with the command as a string literal: name every command literally, so the ACL can be checked", path, n, len(calls))
			}
			for _, c := range calls {
				name := strings.ToLower(string(c[1]))
				found[name] = append(found[name], path)
			}
		}
	}
	if files < 10 {
		t.Fatalf("found %d embedded .lua files: the test no longer sees the scripts", files)
	}
	return found
}

// TestACLListsEveryCommandUsed holds redisacl.Used to the code: every
// command the service's Go code sends through go-redis and every command
// its embedded scripts run is in the list, and the list names nothing else.
func TestACLListsEveryCommandUsed(t *testing.T) {
	pkgs := serviceBinary(t)
	found := scriptCommands(t, pkgs)
	for cmd, where := range goCommands(t, pkgs) {
		found[cmd] = append(found[cmd], where...)
	}
	for cmd, where := range found {
		if !slices.Contains(redisacl.Used, cmd) {
			slices.Sort(where)
			t.Errorf("the service uses %s (%s), which redisacl.Used does not list: its Redis user would be refused it (NOPERM)", strings.ToUpper(cmd), strings.Join(slices.Compact(where), ", "))
		}
	}
	for _, cmd := range redisacl.Used {
		if _, ok := found[cmd]; !ok {
			t.Errorf("redisacl.Used lists %s, which no code of the service uses: remove it (least privilege)", strings.ToUpper(cmd))
		}
	}
}

// goCommands are the commands the Go code of the module's packages in pkgs
// sends through go-redis, by command, where: the packages are type-checked
// against their dependencies' export data, and every use of a go-redis
// method is turned into the command it sends (commandOf).
func goCommands(t *testing.T, pkgs []listed) map[string][]string {
	t.Helper()
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	found := map[string][]string{}
	checked := 0
	for _, p := range pkgs {
		if p.Module == nil || !p.Module.Main {
			continue
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", p.ImportPath, err)
		}
		checked++
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || info.Selections[sel] == nil {
					return true
				}
				m := info.Selections[sel].Obj()
				if m.Pkg() == nil || m.Pkg().Path() != goRedis {
					return true
				}
				cmds, err := commandOf(m, call, info)
				if err != nil {
					t.Errorf("%s: %v", fset.Position(call.Pos()), err)
				}
				for _, c := range cmds {
					found[c] = append(found[c], fset.Position(call.Pos()).String())
				}
				return true
			})
		}
	}
	if checked < 10 {
		t.Fatalf("type-checked %d packages of the module: the test no longer sees the service's code", checked)
	}
	return found
}
