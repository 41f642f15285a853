package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"testing"
)

// Every option ParseArgs accepts is in --help. The options are read from
// the case labels of ParseArgs' switch, so a new flag without help fails.
func TestHelpListsEveryFlag(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "args.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "ParseArgs" {
			return true
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			cc, ok := n.(*ast.CaseClause)
			if !ok {
				return true
			}
			for _, e := range cc.List {
				if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && len(s) > 1 && s[0] == '-' {
						flags = append(flags, s)
					}
				}
			}
			return true
		})
		return false
	})
	if len(flags) < 40 {
		t.Fatalf("found only %d flags in ParseArgs: %v", len(flags), flags)
	}
	for _, fl := range flags {
		re := regexp.MustCompile(`(^|[\s,/])` + regexp.QuoteMeta(fl) + `([\s,=]|$)`)
		if !re.MatchString(helpText) {
			t.Errorf("--help does not list %s", fl)
		}
	}
	// Subcommands are listed too.
	for _, s := range subcommands {
		if !regexp.MustCompile(`(?m)^  (\S+, )*` + s.name + `\b`).MatchString(helpText) {
			t.Errorf("--help does not list the %s command", s.name)
		}
	}
}
