package seckill_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDeployNamesTheOWASPTopTen: docs/DEPLOY.md answers each of the OWASP
// API Security Top 10 (2023) with a control and its tests, or says why not,
// and every test it names exists, so a renamed test does not
// leave the table pointing at nothing.
func TestDeployNamesTheOWASPTopTen(t *testing.T) {
	b, err := os.ReadFile("docs/DEPLOY.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	tests := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w+)\(`)
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			tests[m[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`")
	for i := 1; i <= 10; i++ {
		row := regexp.MustCompile(`(?m)^\| API` + strconv.Itoa(i) + ` [^|]+\|([^|]+)\|([^|]*)\|$`).FindStringSubmatch(doc)
		if row == nil {
			t.Errorf("docs/DEPLOY.md has no OWASP table row for API%d", i)
			continue
		}
		names := named.FindAllStringSubmatch(row[2], -1)
		if len(names) == 0 && !strings.Contains(row[1], "Not covered") {
			t.Errorf("API%d: neither a test nor a reason it is not covered", i)
		}
		for _, n := range names {
			if !tests[n[1]] {
				t.Errorf("API%d names %s, which no test file declares", i, n[1])
			}
		}
	}
}
