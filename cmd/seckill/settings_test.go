package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// settingsOutput is what `seckill settings` prints.
func settingsOutput(t *testing.T) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"seckill", "settings"}, func(string) string { return "" }, &out, &out); err != nil {
		t.Fatalf("seckill settings: %v", err)
	}
	return out.String()
}

// README.md's table of settings is `seckill settings`' output, between its
// two markers.
//
// Can fail: with SECKILL_LOCK_TTL's default set to 3s in the table,
// "README.md's table of settings is not `seckill settings`' output: first
// difference at line 22 of the region".
func TestSettingsTableIsTheREADMEs(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, region, ok := strings.Cut(string(readme), settingsBegin+"\n")
	region, _, ok2 := strings.Cut(region, settingsEnd)
	if !ok || !ok2 {
		t.Fatalf("README.md has no region %s ... %s", settingsBegin, settingsEnd)
	}
	if want := settingsOutput(t); region != want {
		got, wantLines := strings.Split(region, "\n"), strings.Split(want, "\n")
		i := 0
		for i < len(got) && i < len(wantLines) && got[i] == wantLines[i] {
			i++
		}
		t.Errorf("README.md's table of settings is not `seckill settings`' output: first difference at line %d of the region (replace the region with the command's output):\nREADME:  %q\ncommand: %q",
			i+1, at(got, i), at(wantLines, i))
	}
}

// The markers of README.md's table of settings.
const (
	settingsBegin = "<!-- settings:begin: the output of `seckill settings`, held to it by TestSettingsTableIsTheREADMEs -->"
	settingsEnd   = "<!-- settings:end -->"
)

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end)"
}

// `seckill settings` exits 0 without any server, prints one row a setting,
// and each default it prints is the value used when the variable is unset:
// setting the variable to its printed default changes nothing.
//
// Can fail: with SECKILL_RATE_PER_USER_READS printed as `0` (the old doc
// claim) and read as 20, "SECKILL_RATE_PER_USER_READS=0 (its printed
// default) reads differently from unset".
func TestSettingsPrintTheTrueDefaults(t *testing.T) {
	out := settingsOutput(t)
	if rows := strings.Count(out, "\n| `SECKILL_"); rows != len(settingsTable) || !strings.HasPrefix(out, "| variable | default | meaning |\n| --- | --- | --- |\n") {
		t.Fatalf("%d rows for %d settings, or not the header variable, default, meaning:\n%s", rows, len(settingsTable), out)
	}
	base := map[string]string{}
	unset, err := loadConfig(func(k string) string { return base[k] })
	if err != nil {
		t.Fatal(err)
	}
	unset.set = nil
	for _, s := range settingsTable {
		if s.def == "" || strings.Contains(s.def, "<") {
			continue
		}
		if !strings.Contains(out, "| `"+s.name+"` | `"+s.def+"` |") {
			t.Errorf("%s: not printed with its default %s", s.name, s.def)
		}
		c, err := loadConfig(func(k string) string { return map[string]string{s.name: s.def}[k] })
		c.set = nil
		if err != nil || !reflect.DeepEqual(c, unset) {
			t.Errorf("%s=%s (its printed default) reads differently from unset: %v", s.name, s.def, err)
		}
	}
}

// notServes are SECKILL_ names in the code that serve does not read, each
// with why; otherVars (compose's and the scripts') are not serve's either.
var notServes = map[string]string{
	"SECKILL_CRASHPOINT":   "internal/crashpoint, built only with the crash-test tag",
	"SECKILL_TOPOLOGY_DIR": "cmd/redistopo, the test topologies' tool",
}

func notServed(name string) bool {
	return notServes[name] != "" || slices.Contains(otherVars, name) || strings.HasPrefix(name, "SECKILL_TEST_")
}

var settingName = regexp.MustCompile(`SECKILL_[A-Z0-9_]*[A-Z0-9]`)

// Every SECKILL_ name in a string of the service's code (cmd/, internal/;
// not tests, not the test kit's SECKILL_TEST_*) is a setting of the table:
// a variable read with os.Getenv, or named in a message, that `seckill
// settings` would not print fails here.
//
// Can fail: with getenv("SECKILL_ROOM_MAX_HELD") in serve.go and no row
// for it, "cmd/seckill/serve.go: SECKILL_ROOM_MAX_HELD is not in the table
// of settings (settingstable.go)".
func TestEverySettingIsInTheTable(t *testing.T) {
	seen := 0
	for _, dir := range []string{"../../cmd", "../../internal"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				for _, name := range settingName.FindAllString(lit.Value, -1) {
					seen++
					if !knownSetting(name) && !notServed(name) {
						t.Errorf("%s: %s is not in the table of settings (settingstable.go)", strings.TrimPrefix(path, "../../"), name)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen < len(settingsTable) {
		t.Fatalf("found %d SECKILL_ names in the code: the walk missed it", seen)
	}
	// And the loader asks the environment for the table's names only.
	asked := map[string]bool{}
	if _, err := loadConfig(func(k string) string { asked[k] = true; return "" }); err != nil {
		t.Fatal(err)
	}
	for name := range asked {
		if strings.HasPrefix(name, "SECKILL_") && !knownSetting(name) {
			t.Errorf("loadConfig reads %s, which is not in the table of settings", name)
		}
	}
}

// pendingDocDifferences are the differences TestDocsDefaultsAgree found in
// docs another engineer is rewriting, keyed "file: variable: the doc's
// claim": each goes once its doc states the command's default (the test
// says so).
var pendingDocDifferences = map[string]bool{}

// Every Markdown table of README.md and docs/*.md whose first column names
// SECKILL_* variables and that has a column named default (or DEPLOY.md's
// "value here") states, for each variable, the default `seckill settings`
// prints.
//
// Can fail: without pendingDocDifferences, "docs/DEPLOY.md:101:
// SECKILL_RATE_PER_USER_READS: the doc says "0 (off)", `seckill settings`
// says `20`" (and the seven of docs/API.md listed there).
func TestDocsDefaultsAgree(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append([]string{"../../README.md"}, files...)
	found := map[string]bool{}
	for _, file := range files {
		doc, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(file, "../../")
		for _, d := range docDefaults(string(doc)) {
			s, ok := tableSetting(d.variable)
			switch {
			case !ok && !notServed(d.variable):
				t.Errorf("%s:%d: %s is not a setting serve reads", name, d.line, d.variable)
			case !ok, agree(d.claim, s.def):
			default:
				key := name + ": " + d.variable + ": " + d.claim
				found[key] = true
				if !pendingDocDifferences[key] {
					t.Errorf("%s:%d: %s: the doc says %q, `seckill settings` says %s", name, d.line, d.variable, d.claim, defaultCell(s.def))
				}
			}
		}
	}
	for key := range pendingDocDifferences {
		if !found[key] {
			t.Errorf("pendingDocDifferences: %q is fixed: remove it", key)
		}
	}
}

func tableSetting(name string) (setting, bool) {
	i := slices.IndexFunc(settingsTable, func(s setting) bool { return s.name == name })
	if i < 0 {
		return setting{}, false
	}
	return settingsTable[i], true
}

// docDefault is one variable's default as a doc's table states it.
type docDefault struct {
	line            int
	variable, claim string
}

var backticked = regexp.MustCompile("`(SECKILL_[A-Z0-9_]+)`")

// docDefaults reads the tables of a Markdown doc whose header has a
// default column: for each row whose first cell names SECKILL_ variables,
// their defaults (a row of several variables lists its values comma-separated).
func docDefaults(doc string) []docDefault {
	var out []docDefault
	lines := strings.Split(doc, "\n")
	col := -1
	for i, line := range lines {
		if !strings.HasPrefix(line, "|") {
			col = -1
			continue
		}
		cells := cellsOf(line)
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "| ---") {
			col = slices.IndexFunc(cells, func(c string) bool {
				c = strings.ToLower(c)
				return c == "default" || c == "value here"
			})
			continue
		}
		if col < 0 || col >= len(cells) || strings.HasPrefix(line, "| ---") {
			continue
		}
		vars := backticked.FindAllStringSubmatch(cells[0], -1)
		claims := []string{cells[col]}
		if len(vars) > 1 {
			claims = strings.Split(cells[col], ", ")
		}
		for j, v := range vars {
			if claim := strings.TrimSpace(claims[min(j, len(claims)-1)]); claim != "" {
				out = append(out, docDefault{i + 1, v[1], claim})
			}
		}
	}
	return out
}

// cellsOf splits a table row into its trimmed cells; \| is a pipe inside a
// cell.
func cellsOf(row string) []string {
	row = strings.ReplaceAll(strings.Trim(strings.TrimSpace(row), "|"), `\|`, "\x00")
	var cells []string
	for _, c := range strings.Split(row, "|") {
		cells = append(cells, strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|")))
	}
	return cells
}

// agree reports whether a doc's claim states def (the table's; "" for
// none): its first backticked value, or its words before any
// parenthesis, colon or semicolon, read as the same duration or number
// where they are one ("2 s" is 2s, "10,000" is 10000); "unset", "empty"
// and "required..." state that there is none.
func agree(claim, def string) bool {
	head := claim
	if strings.HasPrefix(claim, "`") {
		head, _, _ = strings.Cut(claim[1:], "`")
	} else if i := strings.IndexAny(claim, "(:;"); i >= 0 {
		head = strings.TrimSpace(claim[:i])
	}
	if def == "" {
		h := strings.ToLower(head)
		return h == "unset" || h == "empty" || strings.HasPrefix(h, "required")
	}
	if head == def {
		return true
	}
	if d1, err := time.ParseDuration(strings.ReplaceAll(head, " ", "")); err == nil {
		d2, err := time.ParseDuration(def)
		return err == nil && d1 == d2
	}
	n1, err1 := strconv.ParseFloat(strings.ReplaceAll(head, ",", ""), 64)
	n2, err2 := strconv.ParseFloat(def, 64)
	return err1 == nil && err2 == nil && n1 == n2
}
