package codemode

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
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

// echoTool answers a call with its arguments; the calls of the first
// meet party wait until meet calls are running at once.
type echoTool struct {
	mu      sync.Mutex
	waiting int
	met     chan struct{}
}

func (*echoTool) Name() string                { return "echo" }
func (*echoTool) Description() string         { return "Echoes its arguments" }
func (*echoTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (e *echoTool) Execute(ctx context.Context, c tools.Call) (tools.Result, error) {
	var a struct{ Meet bool }
	_ = json.Unmarshal(c.Args, &a)
	if a.Meet {
		e.mu.Lock()
		e.waiting++
		if e.waiting == 2 {
			close(e.met)
		}
		e.mu.Unlock()
		select {
		case <-e.met:
		case <-time.After(30 * time.Second):
			return tools.ErrorResult("no other call ran at the same time"), nil
		case <-ctx.Done():
			return tools.ErrorResult("aborted"), nil
		}
	}
	return tools.Result{Content: []ai.Content{ai.Text(string(c.Args))}}, nil
}

// Calls made without awaiting each run at the same time (the two meet
// calls only answer once both are running), and thousands of them, whose
// calls and replies overflow the pipes while the program is still making
// calls, all come back.
func TestConcurrentCalls(t *testing.T) {
	e := &echoTool{met: make(chan struct{})}
	tool := New(func() []Function { return []Function{{Tool: e}} })
	r := runCode(t, tool, `const met = await Promise.all([tools.echo({meet: true, n: 1}), tools.echo({meet: true, n: 2})]);
const pad = "x".repeat(200);
const ps = [];
for (let i = 0; i < 3000; i++) ps.push(tools.echo({i, pad}));
const all = await Promise.all(ps);
let sum = 0;
for (const s of all) sum += JSON.parse(s).i;
return {met, sum};`)
	if r.IsError || r.Content[0].Text != `{"met":["{\"meet\":true,\"n\":1}","{\"meet\":true,\"n\":2}"],"sum":4498500}` {
		t.Fatalf("%.300s", r.Content[0].Text)
	}
	var nc struct {
		Calls []struct{ ID, Status string }
	}
	if err := json.Unmarshal(r.NestedCalls, &nc); err != nil || len(nc.Calls) != 3002 || nc.Calls[0].ID != "call_1:1" || nc.Calls[3001].ID != "call_1:3002" {
		t.Fatalf("nestedCalls: %d calls, %v", len(nc.Calls), err)
	}
}
