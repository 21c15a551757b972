package seckill_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// openapiRoutes reads docs/openapi.yaml's operations: "METHOD /path" -> the
// statuses it documents.
func openapiRoutes(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	routes := map[string][]string{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			switch method {
			case "get", "post", "put", "delete", "patch":
			default:
				continue
			}
			var statuses []string
			if o, ok := op.(map[string]any); ok {
				responses, _ := o["responses"].(map[string]any)
				for s := range responses {
					statuses = append(statuses, s)
				}
			}
			routes[strings.ToUpper(method)+" "+path] = statuses
		}
	}
	return routes
}

// TestReadmeAPITableMatchesContract holds the README's API table (## API)
// to the contract: each route it names is one of docs/openapi.yaml's, each
// status a row mentions is one its routes may answer, each error code it
// names is in docs/API.md's error table (with the status written before
// it, if any), and every buyer and admin route of the contract has a row.
// Can fail: a row that promises a status or code the contract does not
// have for that route (the README once said a past ends_at is refused with
// 400 while the contract creates it: 201 ended), or a route missing.
func TestReadmeAPITableMatchesContract(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## API\n")
	section, _, _ = strings.Cut(section, "\n## ")
	if !ok {
		t.Fatal("README has no ## API section")
	}
	routes := openapiRoutes(t)
	codes := errorTable(t)
	route := regexp.MustCompile("`((?:GET|POST|PUT|DELETE|PATCH) /[^`?]*)(?:\\?[^`]*)?`")
	status := regexp.MustCompile(`\b([1-5][0-9]{2})\b`)
	coded := regexp.MustCompile("`?\\b([1-5][0-9]{2})?`? ?`([a-z]+(?:_[a-z]+)+|[a-z]+)`")
	named := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) < 2 {
			continue
		}
		rows++
		var mine []string
		for _, m := range route.FindAllStringSubmatch(cells[0], -1) {
			mine = append(mine, m[1])
			named[m[1]] = true
			if _, ok := routes[m[1]]; !ok {
				t.Errorf("README's API table names %s, which docs/openapi.yaml does not have", m[1])
			}
		}
		text := strings.Join(cells[1:], " | ")
		for _, m := range status.FindAllStringSubmatch(text, -1) {
			for _, r := range mine {
				if st, ok := routes[r]; ok && !slices.Contains(st, m[1]) {
					t.Errorf("README's API table says %s answers %s; docs/openapi.yaml gives it %v", r, m[1], st)
				}
			}
		}
		for _, m := range coded.FindAllStringSubmatch(text, -1) {
			want, known := codes[m[2]]
			switch {
			case !known && m[1] != "":
				t.Errorf("README's API table (%s) names %s %s; docs/API.md's error table has no code %s", strings.Join(mine, ", "), m[1], m[2], m[2])
			case known && m[1] != "" && m[1] != want:
				t.Errorf("README's API table (%s) says %s %s; docs/API.md's error table says %s %s", strings.Join(mine, ", "), m[1], m[2], want, m[2])
			}
		}
	}
	if rows == 0 {
		t.Fatal("README's ## API section has no table rows")
	}
	for r := range routes {
		path := strings.SplitN(r, " ", 2)[1]
		if (strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/admin/")) && !named[r] {
			t.Errorf("docs/openapi.yaml has %s; README's API table has no row naming it", r)
		}
	}
}
