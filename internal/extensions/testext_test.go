package extensions

// The test binary doubles as an extension: with PISCES_TEST_EXT set, TestMain
// runs one of the scenarios below instead of the tests, speaking the
// protocol on stdin/stdout like any extension would.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const testExtEnv = "PISCES_TEST_EXT"

func TestMain(m *testing.M) {
	if s := os.Getenv(testExtEnv); s != "" {
		runTestExt(s)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// tx is the extension side of the protocol, for the test scenarios.
type tx struct {
	scenario string
	outMu    sync.Mutex
	mu       sync.Mutex
	seq      int
	waiting  map[string]chan wireIn
	events   chan string // subscribed events, recorded in the order they came
}

func runTestExt(scenario string) {
	x := &tx{scenario: scenario, waiting: map[string]chan wireIn{}, events: make(chan string, 1024)}
	go x.recordEvents()
	fmt.Fprintf(os.Stderr, "started %s pid %d\n", scenario, os.Getpid())
	r := bufio.NewReader(os.Stdin)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var m wireIn
			if json.Unmarshal(line, &m) == nil {
				x.dispatch(m)
			}
		}
		if err != nil {
			return
		}
	}
}

func (x *tx) write(v any) {
	b, _ := json.Marshal(v)
	x.raw(string(b))
}

func (x *tx) raw(line string) {
	x.outMu.Lock()
	defer x.outMu.Unlock()
	os.Stdout.WriteString(line + "\n")
}

// call sends a request to Pisces and waits for the response.
func (x *tx) call(parent json.RawMessage, method string, params any) wireIn {
	x.mu.Lock()
	x.seq++
	id := "x" + strconv.Itoa(x.seq)
	ch := make(chan wireIn, 1)
	x.waiting[id] = ch
	x.mu.Unlock()
	msg := map[string]any{"type": "request", "id": id, "method": method, "params": params}
	if parent != nil {
		msg["parentId"] = decodeID(parent)
	}
	x.write(msg)
	return <-ch
}

func (x *tx) reply(m wireIn, result any) {
	x.write(map[string]any{"type": "response", "id": m.ID, "result": result})
}

func (x *tx) replyErr(m wireIn, msg string) {
	x.write(map[string]any{"type": "response", "id": m.ID, "error": msg})
}

func (x *tx) dispatch(m wireIn) {
	switch m.Type {
	case "init":
		x.register()
	case "request":
		go x.handle(m)
	case "event":
		x.events <- m.Name
	case "response":
		id := decodeID(m.ID)
		x.mu.Lock()
		ch := x.waiting[id]
		delete(x.waiting, id)
		x.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// recordEvents appends an entry for each event, one at a time, so the
// entries keep the order of the events.
func (x *tx) recordEvents() {
	for name := range x.events {
		x.call(nil, "append_entry", map[string]any{"customType": "saw-event", "data": map[string]any{"name": name}})
	}
}

func (x *tx) register() {
	switch x.scenario {
	case "basic":
		x.write(map[string]any{
			"type": "register", "protocolVersion": 1, "name": "basic",
			"tools": []any{map[string]any{
				"name": "greet", "description": "Greets someone",
				"parameters": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
			}},
			"commands": []any{
				map[string]any{"name": "ask", "description": "Asks things"},
				map[string]any{"name": "actions"},
				map[string]any{"name": "bye", "description": "Shuts down"},
				map[string]any{"name": "fail"},
			},
			"hooks": []string{"tool_call", "tool_result", "input", "before_agent_start",
				"session_before_switch", "session_before_fork", "session_before_tree", "session_before_compact", "no_such_hook"},
			"events": []string{"agent_start"},
		})
	case "second":
		x.write(map[string]any{"type": "register", "hooks": []string{"tool_call", "input", "before_agent_start"}})
	case "badversion":
		x.write(map[string]any{"type": "register", "protocolVersion": 99})
	}
}

func (x *tx) handle(m wireIn) {
	switch x.scenario + "/" + m.Method {
	case "basic/tool_call":
		var p toolCallParams
		_ = json.Unmarshal(m.Params, &p)
		var a struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(p.Args, &a)
		switch a.Command {
		case "crash":
			os.Exit(3)
		case "garbage":
			x.raw("this is not json")
			return
		case "hang":
			time.Sleep(time.Hour)
		case "forbidden":
			x.reply(m, map[string]any{"block": true, "reason": "forbidden by basic"})
		case "ls":
			x.reply(m, map[string]any{"args": map[string]any{"command": "ls -la"}})
		case "pid":
			x.reply(m, map[string]any{"block": true, "reason": strconv.Itoa(os.Getpid())})
		case "ask":
			r := x.call(m.ID, "ui.confirm", map[string]any{"title": "Run?", "message": a.Command})
			var c struct{ Confirmed bool }
			_ = json.Unmarshal(r.Result, &c)
			if !c.Confirmed {
				x.reply(m, map[string]any{"block": true, "reason": "not confirmed"})
				return
			}
			x.reply(m, nil)
		case "badargs":
			x.reply(m, map[string]any{"args": "not an object"})
		case "error":
			x.replyErr(m, "hook exploded")
		default:
			x.reply(m, map[string]any{})
		}
	case "basic/tool_result":
		var p toolResultParams
		_ = json.Unmarshal(m.Params, &p)
		if p.ToolName == "read" {
			x.reply(m, map[string]any{"content": "redacted: " + p.Result.Content[0].Text, "details": map[string]any{"redacted": true}})
			return
		}
		x.reply(m, nil)
	case "basic/input":
		var p inputParams
		_ = json.Unmarshal(m.Params, &p)
		switch {
		case p.Text == "hello":
			x.reply(m, map[string]any{"action": "transform", "text": "hello world (" + p.Source + ")"})
		case strings.HasPrefix(p.Text, "handle"):
			x.reply(m, map[string]any{"action": "handled"})
		default:
			x.reply(m, map[string]any{"action": "continue"})
		}
	case "basic/before_agent_start":
		var p beforeAgentStartParams
		_ = json.Unmarshal(m.Params, &p)
		x.reply(m, map[string]any{"appendSystemPrompt": fmt.Sprintf("Basic rules (prompt had %d chars).", len(p.SystemPrompt))})
	case "basic/session_before_fork", "basic/session_before_compact":
		x.reply(m, map[string]any{"cancel": true})
	case "basic/session_before_switch":
		var p map[string]any
		_ = json.Unmarshal(m.Params, &p)
		x.reply(m, map[string]any{"cancel": p["reason"] == "new"})
	case "basic/session_before_tree":
		x.reply(m, map[string]any{"cancel": false})
	case "basic/execute_tool":
		var p toolCallParams
		_ = json.Unmarshal(m.Params, &p)
		var a struct{ Name string }
		_ = json.Unmarshal(p.Args, &a)
		switch a.Name {
		case "crash":
			os.Exit(4)
		case "hang":
			time.Sleep(time.Hour)
		}
		for i := 1; i <= 2; i++ {
			x.write(map[string]any{"type": "tool_update", "id": m.ID,
				"partialResult": map[string]any{"content": []any{map[string]any{"type": "text", "text": "working " + strconv.Itoa(i)}}}})
		}
		if a.Name == "" {
			x.replyErr(m, "name is required")
			return
		}
		x.reply(m, map[string]any{"content": []any{map[string]any{"type": "text", "text": "hello " + a.Name}},
			"details": map[string]any{"call": p.ToolCallID}})
	case "basic/run_command":
		var p runCommandParams
		_ = json.Unmarshal(m.Params, &p)
		switch p.Name {
		case "ask":
			r := x.call(m.ID, "ui.confirm", map[string]any{"title": "Sure?", "message": p.Args})
			var c struct{ Confirmed, Cancelled bool }
			_ = json.Unmarshal(r.Result, &c)
			r = x.call(m.ID, "ui.select", map[string]any{"title": "Pick", "options": []string{"a", "b"}, "timeout": 100})
			var s struct {
				Value     *string
				Cancelled bool
			}
			_ = json.Unmarshal(r.Result, &s)
			sel := "cancelled"
			if s.Value != nil {
				sel = *s.Value
			}
			x.call(m.ID, "set_session_name", map[string]any{"name": fmt.Sprintf("confirmed=%v select=%s", c.Confirmed, sel)})
			x.reply(m, nil)
		case "actions":
			x.write(map[string]any{"type": "request", "method": "ui.notify", "params": map[string]any{"message": "doing " + p.Args}})
			x.call(m.ID, "ui.setStatus", map[string]any{"statusKey": "basic", "statusText": "busy"})
			x.call(m.ID, "send_message", map[string]any{"text": "from ext: " + p.Args, "deliverAs": "followUp"})
			x.call(m.ID, "append_entry", map[string]any{"customType": "note", "data": map[string]any{"n": 1}})
			r1 := x.call(m.ID, "set_session_name", map[string]any{"name": ""})
			r2 := x.call(m.ID, "no_such_method", nil)
			x.replyErr(m, "empty name: "+decodeError(r1.Error)+"; unknown: "+decodeError(r2.Error))
		case "bye":
			x.call(m.ID, "shutdown", nil)
			x.reply(m, nil)
		case "fail":
			x.replyErr(m, "command failed on purpose")
		}
	case "second/tool_call":
		var p toolCallParams
		_ = json.Unmarshal(m.Params, &p)
		var a struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(p.Args, &a)
		if a.Command == "ls -la" {
			x.reply(m, map[string]any{"block": true, "reason": "second saw " + a.Command})
			return
		}
		x.reply(m, nil)
	case "second/input":
		var p inputParams
		_ = json.Unmarshal(m.Params, &p)
		x.reply(m, map[string]any{"text": p.Text + "!"})
	case "second/before_agent_start":
		var p beforeAgentStartParams
		_ = json.Unmarshal(m.Params, &p)
		x.reply(m, map[string]any{"appendSystemPrompt": "Second saw basic: " + strconv.FormatBool(strings.Contains(p.SystemPrompt, "Basic rules"))})
	default:
		x.replyErr(m, "unsupported "+m.Method)
	}
}

// ---- harness ----

// extScript writes an executable that runs the test binary as scenario.
func extScript(t *testing.T, dir, name, scenario string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return shScript(t, dir, name, fmt.Sprintf("GORACE=atexit_sleep_ms=0 %s=%s exec %q -test.run=^$\n", testExtEnv, scenario, exe))
}

// shScript writes an executable shell script.
func shScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := dir + "/" + name
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// recorder collects extension_error events.
type recorder struct {
	mu     sync.Mutex
	events []string // "path|event|error"
}

func (r *recorder) emit(ev any) {
	e, ok := ev.(interface{ EventType() string })
	if !ok {
		return
	}
	b, _ := json.Marshal(e)
	var v struct{ ExtensionPath, Event, Error string }
	_ = json.Unmarshal(b, &v)
	r.mu.Lock()
	r.events = append(r.events, v.ExtensionPath+"|"+v.Event+"|"+v.Error)
	r.mu.Unlock()
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// waitFor polls cond until it holds, for up to 30 s (a generous bound: the
// tests start processes on machines that may be busy).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
