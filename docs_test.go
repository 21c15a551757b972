package seckill_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The READMEs quote measured figures from one place, loadtest/RESULTS.md.
// A quoted figure is a link whose text holds a digit, to the RESULTS.md
// section it comes from, e.g. [**5,915**](loadtest/RESULTS.md#some-section);
// TestQuotedFiguresComeFromResults checks that each such text appears in
// that section, that every link into RESULTS.md names a section that
// exists, and that no figure is set in bold without such a link.

var (
	mdLink    = regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)\)`)
	bold      = regexp.MustCompile(`(?s)\*\*(.+?)\*\*`)
	mdHeading = regexp.MustCompile(`(?m)^(#{1,6})[ \t]+(.+?)[ \t]*$`)
	spaces    = regexp.MustCompile(`\s+`)
)

const resultsPath = "loadtest/RESULTS.md"

func TestQuotedFiguresComeFromResults(t *testing.T) {
	results, err := os.ReadFile(resultsPath)
	if err != nil {
		t.Fatal(err)
	}
	sections := markdownSections(string(results))
	for _, doc := range []string{"README.md", "loadtest/README.md"} {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, problem := range quotedFigureProblems(doc, string(text), sections) {
			t.Error(problem)
		}
	}
}

// quotedFigureProblems lists what is wrong with the quoted figures of doc.
func quotedFigureProblems(doc, text string, sections map[string]string) (problems []string) {
	for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
		label, target := m[1], m[2]
		file, anchor, _ := strings.Cut(target, "#")
		if file == "" || filepath.Clean(filepath.Join(filepath.Dir(doc), file)) != resultsPath {
			continue
		}
		figure := normalize(label)
		quotes := strings.ContainsAny(figure, "0123456789")
		if anchor == "" {
			if quotes {
				problems = append(problems, fmt.Sprintf("%s: figure %q links to %s without naming its section (#anchor)", doc, figure, file))
			}
			continue
		}
		section, ok := sections[anchor]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: link %q: %s has no section #%s", doc, m[0], resultsPath, anchor))
			continue
		}
		if quotes && !strings.Contains(section, figure) {
			problems = append(problems, fmt.Sprintf("%s: quoted figure %q is not in %s#%s", doc, figure, resultsPath, anchor))
		}
	}
	for _, m := range bold.FindAllStringSubmatch(mdLink.ReplaceAllString(text, ""), -1) {
		if !strings.ContainsAny(m[1], "0123456789") {
			continue
		}
		problems = append(problems, fmt.Sprintf("%s: figure %q is in bold without a link to its section of %s; quote it as [**%s**](%s#section)",
			doc, normalize(m[1]), resultsPath, normalize(m[1]), resultsPath))
	}
	return problems
}

// markdownSections maps each heading's GitHub anchor to the section's text
// (up to the next heading of its level or above), emphasis and line breaks
// normalized as normalize does.
func markdownSections(text string) map[string]string {
	hs := mdHeading.FindAllStringSubmatchIndex(text, -1)
	out := make(map[string]string, len(hs))
	seen := map[string]int{}
	for i, h := range hs {
		level := h[3] - h[2]
		end := len(text)
		for _, next := range hs[i+1:] {
			if next[3]-next[2] <= level {
				end = next[0]
				break
			}
		}
		slug := githubAnchor(text[h[4]:h[5]])
		if n := seen[slug]; n > 0 {
			seen[slug]++
			slug = slug + "-" + string(rune('0'+n))
		} else {
			seen[slug] = 1
		}
		out[slug] = normalize(text[h[0]:end])
	}
	return out
}

// githubAnchor is the id GitHub gives a heading: lower case, punctuation
// dropped, spaces as hyphens.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(normalize(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// normalize drops emphasis and code marks and folds whitespace, so a figure
// wrapped across lines or set in bold still matches.
func normalize(s string) string {
	s = strings.NewReplacer("**", "", "`", "").Replace(s)
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

func TestQuotedFiguresCheckCatchesStrays(t *testing.T) {
	sections := markdownSections("# R\n\n## Bench (2026-11-25)\n\nat 64: **5,915** orders/s\n\n## Other\n\n8,539\n")
	for _, c := range []struct {
		doc  string
		fail bool
	}{
		{"took [**5,915**](loadtest/RESULTS.md#bench-2026-11-25) orders/s", false},
		{"took **8,539** orders/s", true},
		{"took [**8,539**](loadtest/RESULTS.md#bench-2026-11-25) orders/s", true},
		{"took [**5,915**](loadtest/RESULTS.md) orders/s", true},
		{"see [results](loadtest/RESULTS.md#no-such-section)", true},
		{"see [results](loadtest/RESULTS.md)", false},
	} {
		if got := quotedFigureProblems("README.md", c.doc, sections); (len(got) > 0) != c.fail {
			t.Errorf("%q: problems %q, want some: %v", c.doc, got, c.fail)
		}
	}
}

var envName = regexp.MustCompile("`(SECKILL_[A-Z0-9_]+)`")

// The README's configuration table says which of its variables are the
// contract's (docs/API.md's configuration tables) and which are the
// implementation's own; each SECKILL_ variable must be exactly one, and
// every variable of the contract must be in the table.
func TestReadmeConfigurationMatchesContract(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	api, err := os.ReadFile("docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	contract := map[string]bool{}
	for _, line := range strings.Split(string(api), "\n") {
		if m := envName.FindStringSubmatch(line); m != nil && strings.HasPrefix(line, "| `"+m[1]+"`") {
			contract[m[1]] = true
		}
	}
	_, section, ok := strings.Cut(string(readme), "\n## Configuration\n")
	section, _, _ = strings.Cut(section, "\n## ")
	if !ok || len(contract) == 0 {
		t.Fatalf("README has no Configuration section (%v) or docs/API.md no variables (%d)", ok, len(contract))
	}
	prose, table, _ := strings.Cut(section, "\n| variable |")
	own := map[string]bool{}
	for _, m := range envName.FindAllStringSubmatch(prose, -1) {
		own[m[1]] = true
	}
	inTable := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(SECKILL_[A-Z0-9_]+)` \\|").FindAllStringSubmatch(table, -1) {
		inTable[m[1]] = true
		switch {
		case contract[m[1]] && own[m[1]]:
			t.Errorf("README: %s is in docs/API.md's configuration, yet the text before the table calls it the implementation's", m[1])
		case !contract[m[1]] && !own[m[1]]:
			t.Errorf("README: %s is not in docs/API.md's configuration, and the text before the table does not name it as the implementation's", m[1])
		}
	}
	for name := range own {
		if !inTable[name] {
			t.Errorf("README names %s before the table but the table has no row for it", name)
		}
	}
	for name := range contract {
		if !inTable[name] {
			t.Errorf("docs/API.md's configuration has %s; README's table has no row for it", name)
		}
	}
}

// RESULTS.md keeps the current figures, each with the command behind it;
// runs of code that no longer exists move, verbatim, to a file of
// loadtest/history/ linked from its History section. Its links, and those
// of the history files (one directory deeper), must resolve.
const (
	historyDir      = "loadtest/history"
	maxResultsLines = 300
)

func TestResultsStayShort(t *testing.T) {
	results, err := os.ReadFile(resultsPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(results), "\n"); n > maxResultsLines {
		t.Errorf("%s has %d lines, more than %d: keep the current figures there and move superseded runs, verbatim, "+
			"to a file of %s/ (one sentence first saying which code state it describes), linked from its History section",
			resultsPath, n, maxResultsLines, historyDir)
	}
	history, err := filepath.Glob(filepath.Join(historyDir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(history) == 0 {
		t.Fatalf("no history in %s/", historyDir)
	}
	for _, doc := range append([]string{resultsPath}, history...) {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if doc != resultsPath && !strings.Contains(string(results), "history/"+filepath.Base(doc)) {
			t.Errorf("%s is not linked from %s", doc, resultsPath)
		}
		for _, problem := range brokenLinks(doc, string(text)) {
			t.Error(problem)
		}
	}
}

// brokenLinks lists the relative links of doc whose file, or whose section
// of a Markdown file, does not exist.
func brokenLinks(doc, text string) (problems []string) {
	for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
		target := m[2]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		path := doc
		if file != "" {
			path = filepath.Join(filepath.Dir(doc), file)
		}
		body, err := os.ReadFile(path)
		if err != nil {
			if info, serr := os.Stat(path); serr == nil && info.IsDir() {
				continue
			}
			problems = append(problems, fmt.Sprintf("%s: link %q: no file %s", doc, m[0], path))
			continue
		}
		if anchor == "" || !strings.HasSuffix(path, ".md") {
			continue
		}
		if _, ok := markdownSections(string(body))[anchor]; !ok {
			problems = append(problems, fmt.Sprintf("%s: link %q: %s has no section #%s", doc, m[0], path, anchor))
		}
	}
	return problems
}

// docs/API.md is one current reference: each endpoint, header, setting and
// rule stated once, in its place, as it holds today. A change is folded
// into its section, and its history goes to docs/CHANGELOG.md, so the
// contract carries no "extension of DATE" notes, no dated headings and no
// heading twice (two places for one endpoint or rule).
const (
	apiDocPath   = "docs/API.md"
	changelogDoc = "docs/CHANGELOG.md"
)

var isoDate = regexp.MustCompile(`\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b`)

func TestAPIDocReadsAsOneReference(t *testing.T) {
	b, err := os.ReadFile(apiDocPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(apiDocProblems(string(b)), brokenLinks(apiDocPath, string(b))...) {
		t.Error(p)
	}
	log, err := os.ReadFile(changelogDoc)
	if err != nil {
		t.Fatalf("%s, where the contract's history goes: %v", changelogDoc, err)
	}
	if !strings.Contains(string(log), "\n## [Unreleased]") {
		t.Errorf("%s has no ## [Unreleased] section (Keep a Changelog)", changelogDoc)
	}
	for _, p := range brokenLinks(changelogDoc, string(log)) {
		t.Error(p)
	}
}

// apiDocProblems lists what keeps text from reading as one current
// reference.
func apiDocProblems(text string) (problems []string) {
	seen := map[string]int{}
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		if at := strings.Index(strings.ToLower(line), "extension of"); at >= 0 {
			problems = append(problems, fmt.Sprintf("%s:%d says %q: fold the change into its section as what holds today; its history goes to %s",
				apiDocPath, n, line[at:min(len(line), at+40)], changelogDoc))
		}
		m := mdHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if isoDate.MatchString(m[2]) {
			problems = append(problems, fmt.Sprintf("%s:%d: heading %q carries a date; dates belong to %s", apiDocPath, n, m[2], changelogDoc))
		}
		if first, ok := seen[m[2]]; ok {
			problems = append(problems, fmt.Sprintf("%s:%d: heading %q again (first at line %d): one place for each endpoint and rule", apiDocPath, n, m[2], first))
		}
		seen[m[2]] = n
	}
	return problems
}

func TestAPIDocProblemsCanFail(t *testing.T) {
	for _, c := range []struct {
		doc  string
		fail bool
	}{
		{"## Conventions\n## Waiting room\n", false},
		{"## Waiting room (extension of 2026-11-26)\n", true},
		{"- Caching (Extension of 2026-11-25): no-store\n", true},
		{"## Settings 2026-11-29\n", true},
		{"## Ops\n### `POST /x`\n## More\n### `POST /x`\n", true},
	} {
		if got := apiDocProblems(c.doc); (len(got) > 0) != c.fail {
			t.Errorf("%q: problems %q, want some: %v", c.doc, got, c.fail)
		}
	}
}
