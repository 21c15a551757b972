package seckill_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// maxMethods bounds the methods of one type: a type with more does several
// jobs, and its methods hand state on through its fields.
const maxMethods = 30

// TestTypesStaySmall: no type of the non-test code has more than maxMethods
// methods, and no struct embeds a *Service (a step that borrows the whole
// service through its fields is a function of what it needs).
func TestTypesStaySmall(t *testing.T) {
	counts := map[string]int{}
	for _, path := range productionGo(t) {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if name := receiverName(d); name != "" {
					counts[filepath.Dir(path)+"."+name]++
				}
			case *ast.GenDecl:
				ast.Inspect(d, func(n ast.Node) bool {
					if st, ok := n.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							if star, ok := field.Type.(*ast.StarExpr); ok && len(field.Names) == 0 {
								if id, ok := star.X.(*ast.Ident); ok && id.Name == "Service" {
									t.Errorf("%s: a struct embeds *Service", path)
								}
							}
						}
					}
					return true
				})
			}
		}
	}
	for name, n := range counts {
		if n > maxMethods {
			t.Errorf("%s has %d methods, over %d: split it along its jobs", name, n, maxMethods)
		}
	}
}

func receiverName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) != 1 {
		return ""
	}
	typ := d.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if ix, ok := typ.(*ast.IndexExpr); ok {
		typ = ix.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
