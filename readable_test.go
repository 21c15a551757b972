package seckill_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A new maintainer reads the code without the tracker or the seed specs at
// hand: a production comment says why in plain words, never an issue's number,
// a seed's or a date in place of the reason. Tests may still name the seed
// they reproduce. And docs/FAULTS.md stays readable in a terminal and a
// diff: no prose line longer than maxFaultsLine. Its register is a table,
// one row per guard, so a reviewer can scan a column; a row cannot be
// wrapped, so rows may run to maxFaultsRow, and one longer than that says
// too much for a register: its detail belongs in the test's comment.

// citation is an issue or seed number, the words possibly split by a line
// break of the comment, or a date: a comment states what holds, not when
// it came to hold (history is git's and docs/CHANGELOG.md's).
var citation = regexp.MustCompile(`(?i)\b(issues?|seeds?)\s+#?[0-9]+|\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b`)

// testCitation is citation in a test's comments, which may name the seed
// (a production story, docs/SEEDS.md) they reproduce.
var testCitation = regexp.MustCompile(`(?i)\bissues?\s+#?[0-9]+|\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b`)

const (
	faultsPath    = "docs/FAULTS.md"
	maxFaultsLine = 200
	maxFaultsRow  = 700
)

func TestCommentsAndFaultsStayReadable(t *testing.T) {
	t.Run("comments cite no issue, date or (in production) seed", func(t *testing.T) {
		n := 0
		err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			pattern := citation
			if strings.HasSuffix(path, "_test.go") {
				pattern = testCitation
			} else {
				n++
			}
			problems, err := commentCitations(path, src, pattern)
			if err != nil {
				return err
			}
			for _, p := range problems {
				t.Error(p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatal("no production .go file found: run from the repository root")
		}
	})
	t.Run("FAULTS.md lines", func(t *testing.T) {
		text, err := os.ReadFile(faultsPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range longLines(faultsPath, string(text), maxFaultsLine, maxFaultsRow) {
			t.Error(p)
		}
	})
}

// commentCitations lists the comments of one Go file that match pattern
// (citation, testCitation).
func commentCitations(path string, src []byte, pattern *regexp.Regexp) (problems []string, err error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			// Each comment with the next one's text after it, so that
			// "issue" at the end of a line and "22" at the start of the
			// next is still found; reported at the comment it begins in.
			text := c.Text
			if i := indexOf(cg.List, c); i+1 < len(cg.List) {
				text += "\n" + firstWords(cg.List[i+1].Text)
			}
			for _, m := range pattern.FindAllStringIndex(text, -1) {
				if m[0] >= len(c.Text) {
					continue // begins in the next comment: found there
				}
				problems = append(problems, fmt.Sprintf("%s: comment cites %q; say the reason instead",
					fset.Position(c.Pos()), strings.Join(strings.Fields(text[m[0]:m[1]]), " ")))
			}
		}
	}
	return problems, nil
}

func indexOf[T comparable](s []T, v T) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// firstWords is the start of a comment's text, its marker dropped: enough
// to finish a citation the comment before it began.
func firstWords(c string) string {
	c = strings.TrimPrefix(strings.TrimPrefix(c, "//"), "/*")
	if len(c) > 24 {
		c = c[:24]
	}
	return c
}

// longLines lists the lines of text longer than max bytes, or, for a
// table row (a line starting with "|"), longer than maxRow.
func longLines(name, text string, max, maxRow int) (problems []string) {
	for i, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "|") && len(line) > maxRow:
			problems = append(problems, fmt.Sprintf("%s:%d: a table row of %d characters, more than %d: say less in the register, the rest in the test's comment",
				name, i+1, len(line), maxRow))
		case !strings.HasPrefix(line, "|") && len(line) > max:
			problems = append(problems, fmt.Sprintf("%s:%d: %d characters, more than %d: wrap it", name, i+1, len(line), max))
		}
	}
	return problems
}

func TestReadableChecksCatchCitationsAndLongLines(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{"package p\n\n// On by default (issue 22), so one user id cannot spend it alone.\nvar x int\n", 1},
		{"package p\n\n// The three triggers of one verification (seed 002).\nvar x int\n", 1},
		{"package p\n\n// Most of what a purchase costs the database\n// (Issue\n// 21).\nvar x int\n", 1},
		{"package p\n\nvar x int /* see issues 21 and 22 */\n", 1},
		{"package p\n\n// A seed of the fault schedule, so a campaign can be replayed.\nvar x = \"issue 22\"\n", 0},
		{"package p\n\n// Every issue is the reason's; 22 buyers wait.\nvar x int\n", 0},
		{"package p\n\n// Seen in a load test on 2026-11-28: buyers lapsed.\nvar x int\n", 1},
		{"package p\n\n// A time such as 2026-11-22T10:05:00Z in an example.\nvar x int\n", 0},
	} {
		got, err := commentCitations("x.go", []byte(c.src), citation)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != c.want {
			t.Errorf("%q: %d problems %q, want %d", c.src, len(got), got, c.want)
		}
	}
	text := "short\n" + strings.Repeat("x", 201) + "\n" + strings.Repeat("y", 200) + "\n|" + strings.Repeat("r", 399) + "\n|" + strings.Repeat("s", 400) + "\n"
	if got := longLines("f.md", text, 200, 400); len(got) != 2 || !strings.HasPrefix(got[0], "f.md:2:") || !strings.HasPrefix(got[1], "f.md:5:") {
		t.Errorf("longLines: %q, want problems at lines 2 and 5", got)
	}
}
