package httpapi

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestErrorTableStatuses: each row of docs/API.md's error table (## Error
// codes) names the status statusOf, the one place a code becomes a status,
// sends for its code.
// Can fail: a row whose status differs from statusOf's, or a code statusOf
// does not know.
func TestErrorTableStatuses(t *testing.T) {
	b, err := os.ReadFile("../../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(b), "<!-- error-codes:begin -->")
	table, _, _ = strings.Cut(table, "<!-- error-codes:end -->")
	rows := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| ([0-9]{3}) \\|").FindAllStringSubmatch(table, -1)
	if len(rows) == 0 {
		t.Fatal("docs/API.md: no error table between <!-- error-codes:begin --> and <!-- error-codes:end -->")
	}
	for _, m := range rows {
		want, _ := strconv.Atoi(m[2])
		got, ok := statusOf(m[1])
		switch {
		case !ok:
			t.Errorf("docs/API.md's error table has %q; statusOf does not know it", m[1])
		case got != want:
			t.Errorf("docs/API.md's error table says %q is %d; statusOf sends %d", m[1], want, got)
		}
	}
}
