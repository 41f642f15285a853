package codemode

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/testenv"
	"github.com/pisces-agent/pisces/internal/tools"
)

// The test binary is also the codemode child.
func TestMain(m *testing.M) {
	if IsChild() {
		os.Exit(ChildMain(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

func runCode(t *testing.T, tool *Tool, code string) tools.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args, _ := json.Marshal(map[string]string{"code": code})
	r, err := tool.Execute(ctx, tools.Call{ID: "call_1", Args: args})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestProgramResultAndLogs(t *testing.T) {
	tool := New(func() []Function { return nil })
	r := runCode(t, tool, `console.log("hello", {a: 1}); const x = await Promise.resolve(20); return {sum: x + 22, list: [1, "two"]};`)
	if r.IsError || len(r.Content) != 1 {
		t.Fatalf("%+v", r)
	}
	if got := r.Content[0].Text; got != "{\"list\":[1,\"two\"],\"sum\":42}\n\nLogs:\nhello {\"a\":1}" {
		t.Errorf("got %q", got)
	}
	if r.NestedCalls != nil {
		t.Errorf("nested calls without calls: %s", r.NestedCalls)
	}
}

func TestProgramErrors(t *testing.T) {
	tool := New(func() []Function { return nil })
	for _, c := range []struct{ code, want string }{
		{`throw new Error("boom")`, "Error: Error: boom"},
		{`return undefinedVariable + 1`, "Error: ReferenceError: undefinedVariable is not defined"},
		{`await tools.missing({})`, "Error: TypeError"},
		{`return require("fs")`, "Error: ReferenceError: require is not defined"},
		{`this is not javascript`, "Error: SyntaxError"},
	} {
		r := runCode(t, tool, c.code)
		if !r.IsError || !strings.HasPrefix(r.Content[0].Text, c.want) {
			t.Errorf("%s: %+v, want an error starting %q", c.code, r.Content, c.want)
		}
	}
}

func TestWallTimeLimit(t *testing.T) {
	tool := New(func() []Function { return nil })
	tool.TimeoutOverride = time.Second
	start := time.Now()
	r := runCode(t, tool, `while (true) {}`)
	if !r.IsError || !strings.Contains(r.Content[0].Text, "ran longer than 1s") {
		t.Fatalf("%+v", r.Content)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
}

// The limit is tried on the release build of pisces as the child (a
// child built with the race detector has wider limits).
func TestMemoryLimit(t *testing.T) {
	tool := New(func() []Function { return nil })
	exe, err := testenv.PiscesBinary()
	if err != nil {
		t.Fatal(err)
	}
	tool.Exe = exe
	r := runCode(t, tool, `const a = []; while (true) { a.push("x".repeat(1 << 20) + a.length); }`)
	if !r.IsError || !strings.Contains(r.Content[0].Text, "out of memory") {
		t.Fatalf("%+v", r.Content)
	}
}

func TestLogLimit(t *testing.T) {
	tool := New(func() []Function { return nil })
	r := runCode(t, tool, `for (let i = 0; i < 100000; i++) console.log("line " + i); return 1`)
	text := r.Content[0].Text
	if r.IsError || len(text) > OutputLimit+200 || !strings.Contains(text, "[output cut at 50 KB]") {
		t.Fatalf("%d bytes, error %v: %q", len(text), r.IsError, text[max(0, len(text)-300):])
	}
}
