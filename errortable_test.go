package seckill_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// stringConsts returns the string constants of the non-test Go files of dir
// whose names start with prefix, value -> name.
func stringConsts(t *testing.T, dir, prefix string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) || !strings.HasPrefix(name.Name, prefix) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						out[v] = filepath.Base(path) + ": " + name.Name
					}
				}
			}
		}
	}
	return out
}

// errorTable reads docs/API.md's table of error codes: code -> status.
func errorTable(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "<!-- error-codes:begin -->")
	table, _, ok2 := strings.Cut(table, "<!-- error-codes:end -->")
	if !ok || !ok2 {
		t.Fatal("docs/API.md: no <!-- error-codes:begin --> ... <!-- error-codes:end --> table")
	}
	rows := map[string]string{}
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| ([0-9]{3}) \\| [^|]+ \\| [^|]+ \\|$")
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		if _, dup := rows[m[1]]; dup {
			t.Errorf("docs/API.md's error table: %s twice", m[1])
		}
		rows[m[1]] = m[2]
	}
	if len(rows) == 0 {
		t.Fatal("docs/API.md's error table has no rows of the form | `code` | status | route | what the app should do |")
	}
	return rows
}

// openapiErrorCodes reads the enum of ErrorDetail.code in docs/openapi.yaml.
func openapiErrorCodes(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas struct {
				ErrorDetail struct {
					Properties struct {
						Code struct {
							Enum []string `yaml:"enum"`
						} `yaml:"code"`
					} `yaml:"properties"`
				} `yaml:"ErrorDetail"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	codes := doc.Components.Schemas.ErrorDetail.Properties.Code.Enum
	if len(codes) == 0 {
		t.Fatal("docs/openapi.yaml: components.schemas.ErrorDetail.properties.code has no enum")
	}
	return codes
}

// TestErrorTableMatchesCodes: docs/API.md's one table of error codes lists
// exactly the codes the service can answer with (the root package's E...
// constants and the HTTP edge's own code... constants) and exactly the
// codes of docs/openapi.yaml's ErrorDetail, each with one status.
// Can fail: a code declared (say seckill.EPaused) with no row, a row for a
// code nothing declares, or a code openapi.yaml lacks or has beyond the
// table.
func TestErrorTableMatchesCodes(t *testing.T) {
	table := errorTable(t)
	declared := stringConsts(t, ".", "E")
	for code, where := range stringConsts(t, filepath.Join("internal", "httpapi"), "code") {
		declared[code] = "internal/httpapi/" + where
	}
	for code, where := range declared {
		if _, ok := table[code]; !ok {
			t.Errorf("code %q (%s) has no row in docs/API.md's error table (## Error codes): add | `%s` | status | route | what the app should do |", code, where, code)
		}
	}
	for code := range table {
		if _, ok := declared[code]; !ok {
			t.Errorf("docs/API.md's error table has %q, which neither the root package (E... constants) nor internal/httpapi (code... constants) declares", code)
		}
	}
	spec := openapiErrorCodes(t)
	for _, code := range spec {
		if _, ok := table[code]; !ok {
			t.Errorf("docs/openapi.yaml's ErrorDetail.code has %q; docs/API.md's error table has no row for it", code)
		}
	}
	for code := range table {
		if !slices.Contains(spec, code) {
			t.Errorf("docs/API.md's error table has %q; docs/openapi.yaml's ErrorDetail.code enum lacks it", code)
		}
	}
}
