package rpcmode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/bench/sessgen"
	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/rpc"
)

// The answers of get_messages and get_entries as they were encoded before
// they were streamed: the oracle the streamed answers are compared with.

func oldGetMessages(st *session.Session) ([]byte, error) {
	b, err := ai.Messages(st.BuildContext().Messages).MarshalJSON()
	if err != nil {
		return nil, err
	}
	return append(append([]byte(`{"messages":`), b...), '}'), nil
}

func oldGetEntries(st *session.Session, since int) ([]byte, error) {
	all := st.Entries()
	out := make([]json.RawMessage, 0, len(all)-since)
	for _, e := range all[since:] {
		out = append(out, json.RawMessage(e.Raw))
	}
	return rpc.Marshal(rpc.EntriesData{Entries: out, LeafID: leafOf(st)})
}

// unusualSession is a session file with what must not be copied as it is:
// unknown members, key orders the encoders do not write, lone surrogates
// and escapes JSON.stringify writes differently, whitespace, other roles,
// messages that do not decode, and entries that make messages.
func unusualSession() string {
	head := func(id, parent string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return fmt.Sprintf(`"id":"%s","parentId":%s,"timestamp":"2026-03-15T22:40:%02d.000Z"`, id, p, len(id)%60)
	}
	msg := func(id, parent, m string) string {
		return `{"type":"message",` + head(id, parent) + `,"message":` + m + `}`
	}
	usage := `{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.00030000000000000003,"output":0.5,"cacheRead":0,"cacheWrite":0,"total":0.5003}}`
	lines := []string{
		`{"type":"session","version":3,"id":"019cf3a0-0000-7000-8000-0000000000aa","timestamp":"2026-03-15T22:40:00.000Z","cwd":"/tmp/u"}`,
		`{"type":"model_change",` + head("m0", "") + `,"provider":"p","modelId":"m"}`,
		msg("a1", "m0", `{"role":"user","content":"plain","timestamp":1}`),
		msg("a2", "a1", `{"role":"user","content":"x","timestamp":1,"zz":{"k":[1,2]}}`),
		msg("a3", "a2", `{"role":"user","zz":1,"content":"x","timestamp":1}`),
		msg("a4", "a3", `{"timestamp":1,"role":"user","content":"x"}`),
		msg("a5", "a4", `{"role":"user","content":"lone \ud800 surrogate, \ud83d\ude00 pair","timestamp":1}`),
		msg("a6", "a5", `{"role":"user","content":"escapes \u2028 \/ \u00e9 \u001F \u0041 \u000a","timestamp":1}`),
		msg("a7", "a6", "{\"role\":\"user\",\"content\":\"raw \u2028 and \u2029 <&>\",\"timestamp\":1}"),
		msg("a8", "a7", `{"role":"assistant", "content":[],"api":"a","provider":"p","model":"m","usage":`+usage+`,"stopReason":"stop","timestamp":2}`),
		`{ "type":"message", ` + head("a9", "a8") + `, "message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"api":"a","provider":"p","model":"m","usage":` + usage + `,"stopReason":"stop","timestamp":2} }`,
		msg("aa", "a9", `{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{ "command" : "ls" }}],"api":"a","provider":"p","model":"m","usage":`+strings.Replace(usage, "0.5,", "0.50,", 1)+`,"stopReason":"toolUse","timestamp":3,"errorMessage":"late key"}`),
		msg("ab", "aa", `{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"out\n"}],"details":{"a" : 1},"isError":false,"timestamp":4}`),
		msg("ac", "ab", `{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"out\n"}],"details":{"s":"\u2028"},"isError":false,"timestamp":4}`),
		msg("ad", "ac", `{"role":"bashExecution","command":"ls","output":"x","exitCode":0,"cancelled":false,"truncated":false,"timestamp":5}`),
		msg("ae", "ad", `{"role":"futureRole","x":[1, 2]}`),
		msg("af", "ae", `{"role":"user","content":5,"timestamp":1}`),
		msg("ag", "af", `{"role":"system","content":"","sections":{"a":"b"},"timestamp":1}`),
		`{"id":"ah",` + `"type":"message","parentId":"ag","timestamp":"2026-03-15T22:40:10.000Z","message":{"role":"user","content":"type not first","timestamp":1}}`,
		`{"type":"message",` + head("ai", "ah") + `,"message":{"role":"user","content":"first","timestamp":1},"message":{"role":"user","content":"second","timestamp":1}}`,
		`{"type":"custom_message","customType":"note","content":"hi","display":true,` + head("aj", "ai") + `}`,
		`{"type":"branch_summary",` + head("ak", "aj") + `,"fromId":"a1","summary":"sum","fromHook":false}`,
		`{"type":"context_edit",` + head("al", "ak") + `,"targetId":"a2","replacement":{"content":"replaced"}}`,
		`{"type":"context_edit",` + head("am", "al") + `,"targetId":"a3","replacement":null}`,
		`{"type":"label",` + head("an", "am") + `,"targetId":"a1","label":"x\u2028y"}`,
		`{"type":"custom",` + head("ao", "an") + `,"customType":"ext","data":{ "k" : "v" }}`,
		msg("ap", "ao", `{"role":"user","content":[{"type":"text","text":"verbatim \"quoted\" \\ tab\t é 😀 `+"\u2028"+`"}],"timestamp":1773614441000}`),
		msg("aq", "ap", `{"role":"assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"s"},{"type":"text","text":"done"}],"api":"a","provider":"p2","model":"m2","usage":`+usage+`,"stopReason":"stop","timestamp":6,"responseId":"r1","durationMs":12}`),
	}
	return strings.Join(lines, "\n") + "\n"
}

// checkAnswers compares the streamed get_messages and get_entries of the
// session at path with the old encoders, as data and as whole lines from
// the writer; it returns the sizes of the two answers.
func checkAnswers(t *testing.T, name, path string) (int, int) {
	t.Helper()
	st, _, err := session.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return checkStore(t, name, st)
}

func checkStore(t *testing.T, name string, st *session.Session) (int, int) {
	t.Helper()
	dir := t.TempDir()
	sess, err := core.New(core.Options{AgentDir: dir, Cwd: dir, Store: st, InMemory: true, NoContextFiles: true, Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	srv := &call{Server: New(sess, io.Discard, Options{}), sess: sess}
	compare := func(what string, data any, want []byte) int {
		t.Helper()
		d, ok := data.(streamedData)
		if !ok {
			t.Fatalf("%s %s: data %T is not streamed", name, what, data)
		}
		got, _ := d.MarshalJSON()
		var buf bytes.Buffer
		n, err := d.WriteTo(&buf)
		if err != nil || n != int64(buf.Len()) {
			t.Fatalf("%s %s: WriteTo: %d, %v", name, what, n, err)
		}
		for _, g := range [][]byte{got, buf.Bytes()} {
			if !bytes.Equal(g, want) {
				i := 0
				for i < len(g) && i < len(want) && g[i] == want[i] {
					i++
				}
				t.Fatalf("%s %s differs at byte %d:\n got  %.300s\n want %.300s", name, what, i, g[max(0, i-80):], want[max(0, i-80):])
			}
		}
		if h := d.SizeHint(); h != len(want) {
			t.Errorf("%s %s: size hint %d, length %d", name, what, h, len(want))
		}
		// Through the writer: the same line as the old answer.
		var out bytes.Buffer
		w := newWriter(&out, 0, io.Discard)
		w.respond(&rpc.Response{ID: "r", Command: what, Success: true}, d)
		w.close()
		line, _ := rpc.Response{ID: "r", Command: what, Success: true, Data: want}.MarshalJSON()
		if out.String() != string(line)+"\n" {
			t.Fatalf("%s %s: the writer's line differs", name, what)
		}
		return len(want)
	}

	want, err := oldGetMessages(st)
	if err != nil {
		t.Fatal(err)
	}
	data, err := srv.getMessages(nil)
	if err != nil {
		t.Fatal(err)
	}
	nm := compare(rpc.CmdGetMessages, data, want)

	ne := 0
	all := st.Entries()
	for _, since := range []int{0, len(all) / 2, len(all)} {
		line := []byte(`{"type":"get_entries"}`)
		if since > 0 {
			line = []byte(`{"type":"get_entries","since":"` + all[since-1].ID + `"}`)
		}
		want, err := oldGetEntries(st, since)
		if err != nil {
			t.Fatal(err)
		}
		data, err := srv.entries(line)
		if err != nil {
			t.Fatal(err)
		}
		if since == 0 {
			ne = compare(rpc.CmdGetEntries, data, want)
		} else {
			compare(rpc.CmdGetEntries, data, want)
		}
	}
	return nm, ne
}

// get_messages and get_entries are byte for byte what the old encoders
// wrote: for generated sessions, the session package's fixtures (pi's
// files, migrations, compactions, branches), unusual files, and after
// messages are appended in this process.
func TestStreamedAnswersMatchOldEncoders(t *testing.T) {
	dir := t.TempDir()
	n := 3000
	if testing.Short() {
		n = 600
	}
	for i, o := range []sessgen.Options{
		{Entries: n, Seed: 1},
		{Entries: n, Seed: 2, BranchEvery: 50, LabelEvery: 70},
	} {
		p, err := sessgen.WriteFile(filepath.Join(dir, fmt.Sprint(i)), o)
		if err != nil {
			t.Fatal(err)
		}
		nm, ne := checkAnswers(t, fmt.Sprintf("sessgen %+v", o), p)
		if nm < n*300 || ne < n*400 {
			t.Errorf("sessgen %+v: answers of %d and %d bytes", o, nm, ne)
		}
	}

	fixtures, _ := filepath.Glob("../../session/testdata/*.jsonl")
	if len(fixtures) < 8 {
		t.Fatalf("fixtures: %v", fixtures)
	}
	for _, f := range fixtures {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(f)) // a migration rewrites it
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := session.Open(p); err != nil {
			continue // not a session (the error cases)
		}
		checkAnswers(t, filepath.Base(f), p)
	}

	p := filepath.Join(dir, "unusual.jsonl")
	if err := os.WriteFile(p, []byte(unusualSession()), 0o644); err != nil {
		t.Fatal(err)
	}
	checkAnswers(t, "unusual", p)

	// Appended in this process (encoded, not copied), with a compaction
	// and its system checkpoint, a branch summary and a context edit.
	st, _, err := session.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	u := &ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("new \u2028 <b>"), Timestamp: 9}
	e1, _ := st.AppendMessage(u)
	st.AppendMessage(&ai.AssistantMessage{Role: ai.RoleAssistant, Content: []ai.Content{ai.Text("ok")}, Provider: "p", Model: "m", StopReason: "stop", Timestamp: 10})
	st.AppendMessage(&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "c", ToolName: "t", Content: []ai.Content{ai.Text("r")}, Details: json.RawMessage(`{"a": 1}`), Timestamp: 11})
	st.AppendCustomMessage("note", ai.StringContent("custom"), false, json.RawMessage(`{"d":[1, 2]}`))
	st.AppendContextEdit(e1.ID, json.RawMessage(`{"content":[{"type":"text","text":"edited"}]}`))
	checkStore(t, "appended", st)
	st.AppendCompactionEntry(session.Compaction{Summary: "so far", FirstKeptEntryID: "ap", TokensBefore: 7,
		SystemMessage: &ai.SystemMessage{Role: ai.RoleSystem, Content: ai.StringContent("prompt"), Timestamp: 12}})
	st.AppendMessage(&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("after"), Timestamp: 13})
	checkStore(t, "compacted", st)
	st.AppendBranchSummary("root", "a branch", nil, false)
	checkStore(t, "branch summary", st)

	// An empty session (no leaf).
	empty, err := session.New(session.Options{InMemory: true, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	checkStore(t, "empty", empty)
}
