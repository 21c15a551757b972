package seckill_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The README is for the people who use the service: its first screen says
// what it is, why a shop would use it and the two commands, with no
// machine notes or dates (those go further down, or to docs/); the whole
// stays short enough to read, the rest living in docs/. docs/FAULTS.md is
// a register a reviewer can scan, not a log.
const (
	maxReadmeLines   = 300
	readmeScreen     = 40
	maxFaultsLines   = 900
	demoCommandLine  = "go run ./cmd/seckill"
	testsCommandLine = "bash scripts/test.sh"
)

func TestReadmeFirstScreenAndLength(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range readmeProblems(string(b)) {
		t.Error(p)
	}
}

// readmeProblems lists what keeps text from being the README described
// above.
func readmeProblems(text string) (problems []string) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) > maxReadmeLines {
		problems = append(problems, fmt.Sprintf("README.md has %d lines, more than %d: move the rest to docs/ and link it by name", len(lines), maxReadmeLines))
	}
	screen := lines[:min(len(lines), readmeScreen)]
	for _, cmd := range []string{demoCommandLine, testsCommandLine} {
		found := false
		for _, l := range screen {
			found = found || strings.TrimSpace(l) == cmd
		}
		if !found {
			problems = append(problems, fmt.Sprintf("README.md's first %d lines do not give the command %q on a line of its own", readmeScreen, cmd))
		}
	}
	for i, l := range screen {
		if d := isoDate.FindString(l); d != "" {
			problems = append(problems, fmt.Sprintf("README.md:%d: the date %s in the first screen: dated figures and build times go further down", i+1, d))
		}
	}
	return problems
}

func TestFaultsStayARegister(t *testing.T) {
	b, err := os.ReadFile(faultsPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxFaultsLines {
		t.Errorf("%s has %d lines, more than %d: one register row per guard; details belong in the tests' own comments", faultsPath, n, maxFaultsLines)
	}
}

func TestReadmeChecksCatchAFirstScreenGoneWrong(t *testing.T) {
	good := "# x\n\n    go run ./cmd/seckill\n\n    bash scripts/test.sh\n"
	for _, c := range []struct {
		name, text string
		want       int
	}{
		{"good", good, 0},
		{"a date on the first screen", good + "took 16 minutes on 2026-11-28\n", 1},
		{"a date further down", good + strings.Repeat("\n", readmeScreen) + "on 2026-11-28\n", 0},
		{"the test command below the screen", "# x\n\n    go run ./cmd/seckill\n" + strings.Repeat("\n", readmeScreen) + "    bash scripts/test.sh\n", 1},
		{"too long", good + strings.Repeat("line\n", maxReadmeLines), 1},
	} {
		if got := readmeProblems(c.text); len(got) != c.want {
			t.Errorf("%s: %d problems %q, want %d", c.name, len(got), got, c.want)
		}
	}
}

// RESULTS.md opens with the figures a user asks for, before the log: the
// text up to the section after "The figures in short" fits a screen.
const maxResultsOpening = 30

func TestResultsOpenWithTheFigures(t *testing.T) {
	b, err := os.ReadFile(resultsPath)
	if err != nil {
		t.Fatal(err)
	}
	before, after, ok := strings.Cut(string(b), "\n## The figures in short\n")
	if !ok || strings.Contains(before, "\n## ") {
		t.Fatalf("%s does not open with its section \"The figures in short\"", resultsPath)
	}
	summary, _, _ := strings.Cut(after, "\n## ")
	if n := strings.Count(before+summary, "\n") + 2; n > maxResultsOpening {
		t.Errorf("%s's opening, up to the end of \"The figures in short\", is %d lines, more than %d", resultsPath, n, maxResultsOpening)
	}
}
