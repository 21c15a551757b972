package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dispatched are the commands run's switch dispatches, read from main.go.
func dispatched(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "run" {
			return true
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok {
				return true
			}
			if id, isIdent := sw.Tag.(*ast.Ident); !isIdent || id.Name != "cmd" {
				return true
			}
			for _, c := range sw.Body.List {
				for _, e := range c.(*ast.CaseClause).List {
					if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						names = append(names, s)
					}
				}
			}
			return false
		})
		return false
	})
	if len(names) == 0 {
		t.Fatal("no switch on cmd in run")
	}
	slices.Sort(names)
	return names
}

// listed are the commands `seckill help` lists: the first word of each
// command's line in its commands block.
func listed(help string) []string {
	_, block, _ := strings.Cut(help, "commands:\n")
	block, _, _ = strings.Cut(block, "\n\n")
	var names []string
	for _, l := range strings.Split(block, "\n") {
		// A command starts its line after two spaces; its description
		// may go on, indented further, on the lines after it.
		if rest, ok := strings.CutPrefix(l, "  "); ok && rest != "" && rest[0] != ' ' {
			names = append(names, strings.Fields(rest)[0])
		}
	}
	slices.Sort(names)
	return names
}

// `seckill help` lists every command run dispatches, and no other (a command missing
// from the help is a command nobody finds).
func TestHelpListsEveryCommand(t *testing.T) {
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"seckill", "help"}, func(string) string { return "" }, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	want, got := dispatched(t), listed(stdout.String())
	if !slices.Equal(got, want) {
		t.Fatalf("seckill help lists %v; run dispatches %v\n%s", got, want, stdout.String())
	}
}
