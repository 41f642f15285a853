package rpc_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/rpc"
)

// constants returns the string constants of file whose names start with prefix.
func constants(t *testing.T, file, prefix string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, prefix) || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					out[n.Name] = v
				}
			}
		}
	}
	return out
}

// TestCatalogCoversConstants keeps Commands and Events in step with the
// command and event name constants.
func TestCatalogCoversConstants(t *testing.T) {
	listed := map[string]bool{}
	for _, c := range rpc.Commands() {
		if listed[c.Name] {
			t.Errorf("command %q listed twice", c.Name)
		}
		listed[c.Name] = true
		if c.Command == nil {
			t.Errorf("command %q has no command struct", c.Name)
		}
		if c.AliasOf != "" && !listed[c.AliasOf] {
			t.Errorf("command %q is an alias of %q, which is not listed before it", c.Name, c.AliasOf)
		}
	}
	cmds := constants(t, "commands.go", "Cmd")
	for name, v := range constants(t, "omp.go", "Cmd") {
		cmds[name] = v
	}
	for name, v := range cmds {
		if !listed[v] {
			t.Errorf("%s (%q) is missing from rpc.Commands()", name, v)
		}
	}
	events := map[string]bool{}
	for _, e := range rpc.Events() {
		if events[e.Name] {
			t.Errorf("event %q listed twice", e.Name)
		}
		events[e.Name] = true
		if !e.Legacy && e.Event.EventType() != e.Name {
			t.Errorf("event %q: its struct reports %q", e.Name, e.Event.EventType())
		}
	}
	evs := constants(t, "events.go", "Event")
	for name, v := range constants(t, "omp.go", "Event") {
		evs[name] = v
	}
	for name, v := range evs {
		if !events[v] {
			t.Errorf("%s (%q) is missing from rpc.Events()", name, v)
		}
	}
}
