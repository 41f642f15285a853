package ai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every golden file is one message as pi writes it. Decoding and encoding
// again must give the same bytes: key order, omitted fields, unknown
// fields, no HTML or U+2028/U+2029 escaping.
func TestMessageGoldensRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("testdata/messages/*.json")
	if len(files) < 10 {
		t.Fatalf("expected the message goldens, found %d", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want = bytes.TrimSuffix(want, []byte("\n"))
			m, err := DecodeMessage(want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			// encoding/json re-compacts a Marshaler's output, but our
			// encoder must be used for the escaping rules: compare both.
			direct, err := marshalMessage(m)
			if err != nil {
				t.Fatal(err)
			}
			if string(direct) != string(want) {
				t.Errorf("round trip differs\nwant %s\ngot  %s", want, direct)
			}
			if !json.Valid(got) {
				t.Errorf("invalid JSON: %s", got)
			}
		})
	}
}

func marshalMessage(m Message) ([]byte, error) {
	type marshaler interface{ MarshalJSON() ([]byte, error) }
	return m.(marshaler).MarshalJSON()
}

// Messages built in Go come out in pi's key order with absent fields left out.
func TestBuiltMessagesMatchGoldens(t *testing.T) {
	dur := int64(12)
	cases := map[string]Message{
		"user_string.json":              &UserMessage{Content: StringContent("plain string content"), Timestamp: 1795360000002},
		"compaction_summary.json":       &CompactionSummaryMessage{Summary: "Earlier work.", TokensBefore: 123456, Timestamp: 1795360000013},
		"bash_execution_cancelled.json": &BashExecutionMessage{Command: "sleep 9", Cancelled: true, Timestamp: 1795360000009},
		"branch_summary_null.json":      &BranchSummaryMessage{Summary: "From the root.", Timestamp: 1795360000012},
		"tool_result.json": &ToolResultMessage{
			ToolCallID: "call_1", ToolName: "bash", Content: []Content{Text("hi\n")},
			Details: json.RawMessage(`{"truncation":null}`), DurationMs: &dur,
			NestedCalls: json.RawMessage(`{"calls":[{"id":"n1","name":"read","status":"ok"}],"complete":true}`),
			Timestamp:   1795360000006,
		},
	}
	for name, m := range cases {
		want, err := os.ReadFile(filepath.Join("testdata/messages", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != strings.TrimSuffix(string(want), "\n") {
			t.Errorf("%s:\nwant %s\ngot  %s", name, want, got)
		}
	}
}

func TestUnknownRoleIsKept(t *testing.T) {
	raw := []byte(`{"role":"hookNote","x":1}`)
	m, err := DecodeMessage(raw)
	if err != nil {
		t.Fatal(err)
	}
	if m.MessageRole() != "hookNote" {
		t.Fatalf("role %q", m.MessageRole())
	}
	b, _ := json.Marshal(m)
	if string(b) != string(raw) {
		t.Fatalf("got %s", b)
	}
}

func TestDecodeErrorsNameTheProblem(t *testing.T) {
	for _, in := range []string{`{"content":[]}`, `{"role":"user","content":[{"text":"x"}],"timestamp":1}`} {
		if _, err := DecodeMessage([]byte(in)); err == nil {
			t.Errorf("%s: expected an error", in)
		}
	}
}

func TestSystemMessagePromptText(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		// pi's shape: the prompt is in the sections, in order; null removes one.
		{`{"role":"system","content":"","sections":{"preamble":"You help.","rules":null,"cwd":"Working directory: /w"},"timestamp":1}`, "You help.\n\nWorking directory: /w"},
		{`{"role":"system","content":"Whole prompt","sections":{"preamble":"ignored"},"timestamp":1}`, "Whole prompt"},
		{`{"role":"system","content":[{"type":"text","text":"As blocks"}],"timestamp":1}`, "As blocks"},
		{`{"role":"system","content":"","timestamp":1}`, ""},
	} {
		m, err := DecodeMessage([]byte(c.json))
		if err != nil {
			t.Fatal(err)
		}
		sm, ok := m.(*SystemMessage)
		if !ok {
			t.Fatalf("%s: decoded as %T", c.json, m)
		}
		if got := sm.PromptText(); got != c.want {
			t.Errorf("%s: PromptText = %q, want %q", c.json, got, c.want)
		}
	}
}
