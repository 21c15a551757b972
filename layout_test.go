package seckill_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/seckill-oss/seckill"

// mapRow is a row of docs/DESIGN.md's map: `| layer | package | job |`.
var mapRow = regexp.MustCompile(`^\| ([0-9T]) \| (.+?) \| `)

// designLayers reads the map at the top of docs/DESIGN.md: each package's
// layer, "T" for test tooling.
func designLayers(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("docs/DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	layers := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := mapRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		for _, cell := range strings.Split(m[2], ",") {
			name := strings.Trim(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cell), "(root)")), "`")
			if name == "seckill" {
				name = ""
			}
			layers[name] = m[1]
		}
	}
	return layers
}

// goList returns each package of the module (relative path, "" for the
// root) with the module's packages it imports, as the service and the crash
// tests build it.
func goList(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-tags", "seckill_crashpoints", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		name, _ := rel(f[0])
		pkgs[name] = nil
		for _, imp := range f[1:] {
			if r, ok := rel(imp); ok {
				pkgs[name] = append(pkgs[name], r)
			}
		}
	}
	return pkgs
}

// TestPackageMap: docs/DESIGN.md's map lists exactly the module's packages,
// and every import runs down the layers: a package imports only packages
// of a lower layer (so no cycle and nothing that runs back up), and the
// service never imports test tooling.
// Can fail: a package added without a row, a row left for a package gone,
// or an import from a lower layer to a higher one (such as order importing
// purchase) or from the service to internal/testkit.
func TestPackageMap(t *testing.T) {
	layers, pkgs := designLayers(t), goList(t)
	for p := range pkgs {
		if _, ok := layers[p]; !ok {
			t.Errorf("package %q is not in docs/DESIGN.md's map", p)
		}
	}
	for p := range layers {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("docs/DESIGN.md's map lists %q, which is not a package", p)
		}
	}
	for p, imports := range pkgs {
		from, ok := layers[p]
		if !ok {
			continue
		}
		for _, imp := range imports {
			to, ok := layers[imp]
			switch {
			case !ok:
			case from == "T":
			case to == "T":
				t.Errorf("%q (layer %s) imports test tooling %q", p, from, imp)
			case to >= from:
				t.Errorf("%q (layer %s) imports %q (layer %s): imports must run down the layers", p, from, imp, to)
			}
		}
	}
	if t.Failed() {
		names := slices.Sorted(func(yield func(string) bool) {
			for p := range pkgs {
				if !yield(p) {
					return
				}
			}
		})
		t.Logf("packages: %v", names)
	}
}
