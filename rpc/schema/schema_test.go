package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/testenv"
	"github.com/pisces-agent/pisces/rpc"
)

var update = flag.Bool("update", false, "rewrite docs/rpc.schema.json")

const goldenPath = "../../docs/rpc.schema.json"

// binary is the pisces binary (testenv.PiscesBinary).
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	var err error
	if binary, err = testenv.PiscesBinary(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

func generate(t *testing.T) []byte {
	t.Helper()
	b, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGolden fails when regenerating would change docs/rpc.schema.json.
// Run `go test ./rpc/schema -update` to rewrite it (refused when CI is set);
// the rewritten file is then compared like any other.
func TestGolden(t *testing.T) {
	got := generate(t)
	if testenv.Update(t, *update) {
		if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v (run `go test ./rpc/schema -update` to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/rpc.schema.json is out of date with package rpc: %s\nrun `go test ./rpc/schema -update` and review the diff", firstDiff(want, got))
	}
}

func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: checked in %q, generated %q", i+1, x, y)
		}
	}
	return "no line differs"
}

func TestDeterministic(t *testing.T) {
	if !bytes.Equal(generate(t), generate(t)) {
		t.Fatal("two generations differ")
	}
}

// TestPrintSchema checks that `pisces --print-schema` prints the document.
func TestPrintSchema(t *testing.T) {
	out, err := exec.Command(binary, "--print-schema").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, generate(t)) {
		t.Fatal("pisces --print-schema differs from Generate()")
	}
}

// TestStructure checks that every $ref resolves, that every keyword is one
// the validator knows, and that every command and event has its entry.
func TestStructure(t *testing.T) {
	doc := generate(t)
	v, err := newValidator(doc)
	if err != nil {
		t.Fatal(err)
	}
	if v.root["$schema"] != Draft {
		t.Errorf("$schema = %v", v.root["$schema"])
	}
	var walk func(path string, s any)
	walk = func(path string, s any) {
		switch x := s.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok {
				name, _ := strings.CutPrefix(r, "#/$defs/")
				if _, ok := v.defs[name]; !ok {
					t.Errorf("%s: unresolved $ref %s", path, r)
				}
			}
			for k, e := range x {
				if k == "properties" || k == "$defs" {
					for pk, pe := range e.(map[string]any) {
						walk(path+"/"+k+"/"+pk, pe)
					}
					continue
				}
				walk(path+"/"+k, e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s/%d", path, i), e)
			}
		}
	}
	walk("#", v.root)
	for _, c := range rpc.Commands() {
		if _, ok := v.defs[camel(c.Name)+"Command"]; !ok {
			t.Errorf("no definition for command %s", c.Name)
		}
	}
	for _, e := range AllEvents() {
		if _, ok := v.defs[camel(e.Name)+"Event"]; !ok {
			t.Errorf("no definition for event %s", e.Name)
		}
	}
	// The validator must reject what the schema excludes.
	for _, tc := range []struct{ def, line string }{
		{"Command", `{"type":"prompt"}`},
		{"Command", `{"type":"no_such_command"}`},
		{"Command", `{"type":"set_steering_mode","mode":"sometimes"}`},
		{"Command", `{"type":"set_auto_retry","enabled":"yes"}`},
		{"Response", `{"type":"response","command":"get_state","success":true}`},
		{"Response", `{"type":"response","command":"get_state","success":false}`},
		{"Response", `{"type":"response","command":"cycle_model","success":true,"data":{"model":null,"thinkingLevel":"high"}}`},
		{"Event", `{"type":"agent_settled"}`},
		{"Event", `{"type":"message_end","message":{"role":"robot","timestamp":1}}`},
		{"Event", `{"type":"message_end","message":{"role":"user","content":[{"type":"image","mimeType":"image/png"}],"timestamp":1}}`},
		{"Event", `{"type":"message_update","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"assistantMessageEvent":{"type":"text_delta","contentIndex":0}}`},
	} {
		if err := v.validateLine(tc.def, []byte(tc.line)); err == nil {
			t.Errorf("%s accepted %s", tc.def, tc.line)
		}
	}
	for _, tc := range []struct{ def, line string }{
		{"Command", `{"id":"1","type":"prompt","message":"hi","images":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`},
		{"Command", `{"type":"compact","customInstructions":"x"}`},
		{"Response", `{"type":"response","command":"cycle_model","success":true,"data":null}`},
		{"Response", `{"id":"7","type":"response","command":"parse","success":false,"error":"Failed to parse command"}`},
		{"Event", `{"type":"message_end","message":{"role":"user","content":"hi","timestamp":1}}`},
		{"Command", `{"type":"prompt","message":"hi","images":[{"type":"image","url":"https://example.com/a.png"},{"type":"image","source":{"type":"url","url":"https://example.com/b.png"}}]}`},
		{"Event", `{"type":"message_end","message":{"role":"user","content":[{"type":"image","url":"https://example.com/a.png"},{"type":"image","data":"AA==","mimeType":"image/png"}],"timestamp":1}}`},
		{"Event", `{"type":"auto_compaction_start","reason":"threshold"}`},
	} {
		if err := v.validateLine(tc.def, []byte(tc.line)); err != nil {
			t.Errorf("%s rejected %s: %v", tc.def, tc.line, err)
		}
	}
}

// TestRealOutputMatches runs the real binary with the scripted provider and
// checks every command sent and every line received against the schema, on
// pi's wire, the legacy wire and oh-my-pi's (--rpc-compat omp).
func TestRealOutputMatches(t *testing.T) {
	for _, wire := range []string{"", "legacy", "omp"} {
		t.Run("wire="+wire, func(t *testing.T) { checkSession(t, wire) })
	}
}

func checkSession(t *testing.T, wire string) {
	v, err := newValidator(generate(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	os.WriteFile(script, []byte(`{"turns":[
		{"content":[{"type":"thinking","thinking":"let me see"},{"type":"text","text":"hello there"}]},
		{"content":[{"type":"toolCall","name":"bash","arguments":{"command":"echo hi"}}]},
		{"content":[{"type":"text","text":"done"}]}
	],"chunkSize":4}`), 0o644)
	args := []string{"--mode", "rpc", "--provider", "scripted", "--script", script,
		"--agent-dir", filepath.Join(dir, "agent"), "--session-dir", filepath.Join(dir, "sessions")}
	if wire != "" {
		args = append(args, "--rpc-compat", wire)
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	lines := make(chan []byte, 1024)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	var seen []string
	// next reads lines until the response with id (or the event typ) and
	// validates each.
	next := func(until func(map[string]any) bool) map[string]any {
		t.Helper()
		timeout := time.After(time.Minute)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("stdout ended; stderr:\n%s", stderr.String())
				}
				var head map[string]any
				if err := json.Unmarshal(line, &head); err != nil {
					t.Fatalf("not JSON on stdout: %q", line)
				}
				def := "Event"
				if head["type"] == "response" {
					def = "Response"
				}
				if err := v.validateLine(def, line); err != nil {
					t.Errorf("%s line does not match the schema: %v\n%s", def, err, line)
				}
				if err := v.validateLine("", line); err != nil {
					t.Errorf("line does not match the root schema: %v", err)
				}
				seen = append(seen, fmt.Sprint(head["type"]))
				if until(head) {
					return head
				}
			case <-timeout:
				t.Fatalf("timed out; stderr:\n%s", stderr.String())
			}
		}
	}
	n := 0
	send := func(line string) map[string]any {
		t.Helper()
		n++
		id := fmt.Sprintf("r%d", n)
		var m map[string]any
		json.Unmarshal([]byte(line), &m)
		m["id"] = id
		b, _ := json.Marshal(m)
		if err := v.validateLine("Command", b); err != nil {
			t.Errorf("command does not match the schema: %v\n%s", err, b)
		}
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		return next(func(h map[string]any) bool { return h["type"] == "response" && h["id"] == id })
	}
	waitEvent := func(typ string) { next(func(h map[string]any) bool { return h["type"] == typ }) }

	next(func(h map[string]any) bool { return h["type"] == "ready" })
	send(`{"type":"get_state"}`)
	send(`{"type":"prompt","message":"hi"}`)
	waitEvent("agent_settled")
	send(`{"type":"prompt","message":"run it"}`)
	waitEvent("agent_settled")
	for _, c := range []string{
		`{"type":"get_messages"}`, `{"type":"get_available_models"}`, `{"type":"cycle_model"}`,
		`{"type":"set_model","provider":"scripted","modelId":"scripted"}`,
		`{"type":"cycle_thinking_level"}`, `{"type":"set_thinking_level","level":"low"}`,
		`{"type":"get_available_thinking_levels"}`, `{"type":"set_steering_mode","mode":"all"}`,
		`{"type":"set_follow_up_mode","mode":"all"}`, `{"type":"set_interrupt_mode","mode":"wait"}`,
		`{"type":"set_queue_mode","mode":"one-at-a-time"}`,
		`{"type":"set_auto_compaction","enabled":false}`, `{"type":"set_auto_retry","enabled":true}`,
		`{"type":"abort_retry"}`, `{"type":"bash","command":"echo out; exit 3"}`, `{"type":"abort_bash"}`,
		`{"type":"get_session_stats"}`, `{"type":"get_fork_messages"}`, `{"type":"get_branch_messages"}`,
		`{"type":"get_entries"}`, `{"type":"get_tree"}`, `{"type":"get_last_assistant_text"}`,
		`{"type":"set_session_name","name":"schema test"}`, `{"type":"clear_queue"}`,
		`{"type":"steer","message":"idle steer"}`, `{"type":"follow_up","message":"idle follow-up"}`,
		`{"type":"fork","entryId":"no-such-entry"}`, `{"type":"compact"}`, `{"type":"abort"}`,
	} {
		send(c)
	}
	st := send(`{"type":"get_fork_messages"}`)
	data, _ := st["data"].(map[string]any)
	if msgs, _ := data["messages"].([]any); len(msgs) > 0 {
		id := msgs[0].(map[string]any)["entryId"].(string)
		send(fmt.Sprintf(`{"type":"fork","entryId":%q}`, id))
	}
	send(`{"type":"clone"}`)
	send(`{"type":"new_session"}`)
	if wire == "omp" {
		for _, c := range []string{
			`{"type":"negotiate_protocol","protocolVersion":2}`, `{"type":"get_available_commands"}`,
			`{"type":"get_messages_page","limit":1}`, `{"type":"set_event_filter","events":["agent_end"]}`,
			`{"type":"set_event_filter","events":null}`, `{"type":"open_session","sessionDir":"sessions"}`,
		} {
			send(c)
		}
	}
	stdin.Close()
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pisces: %v; stderr:\n%s", err, stderr.String())
	}
	t.Logf("%d lines checked against the schema", len(seen))
	wants := []string{"agent_start", "message_update", "tool_execution_end", "turn_end", "agent_end"}
	if wire == "omp" {
		wants = append(wants, "prompt_result", "session_settled", "available_commands_update")
	}
	for _, want := range wants {
		found := false
		for _, s := range seen {
			found = found || s == want
		}
		if !found {
			t.Errorf("no %s event seen", want)
		}
	}
}
