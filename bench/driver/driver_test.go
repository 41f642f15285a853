package driver

import (
	"strings"
	"testing"
	"time"
)

func TestParseEnvelope(t *testing.T) {
	cases := []struct {
		in   string
		want Line
	}{
		{`{"type":"message_update","usage":{},"assistantMessageEvent":{"type":"text_delta"}}`, Line{Type: "message_update"}},
		{`{"id":"b1","type":"response","command":"get_state","success":true,"data":{"x":[1,2,3]}}`, Line{Type: "response", ID: "b1", Command: "get_state", Success: true}},
		{`{"id":"b2","type":"response","command":"list_sessions","success":false,"error":"not yet"}`, Line{Type: "response", ID: "b2", Command: "list_sessions", Error: "not yet"}},
		{`{"type":"agent_end","messages":[{"role":"user"}],"willRetry":false}`, Line{Type: "agent_end"}},
		{`not json`, Line{Type: "?"}},
	}
	for _, c := range cases {
		got := parse([]byte(c.in))
		got.Raw = nil
		if got.Type != c.want.Type || got.ID != c.want.ID || got.Command != c.want.Command || got.Success != c.want.Success || got.Error != c.want.Error {
			t.Errorf("%s: got %+v, want %+v", c.in, got, c.want)
		}
	}
}

// A tiny agent in sh: ready, then one response per command with its id.
const shAgent = `echo '{"type":"ready"}'
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed 's/.*"id":"\([^"]*\)".*/\1/')
  printf '{"type":"agent_start"}\n{"id":"%s","type":"response","command":"get_state","success":true,"data":{}}\n' "$id"
done`

func TestAgentRoundTrip(t *testing.T) {
	a, err := Start(Config{Argv: []string{"/bin/sh", "-c", shAgent}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.WaitEvent(0, "ready"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		l, d, err := a.Call(map[string]any{"type": "get_state"})
		if err != nil || !l.Success || d <= 0 {
			t.Fatalf("%+v %v %v", l, d, err)
		}
	}
	if cpu, err := a.CPU(); err != nil || cpu < 0 {
		t.Fatalf("cpu %v %v", cpu, err)
	}
	if rss, hwm, err := a.Memory(); err != nil || rss <= 0 || hwm < rss {
		t.Fatalf("rss %d hwm %d %v", rss, hwm, err)
	}
	if _, _, err := a.WaitWithin(20*time.Millisecond, 0, "nothing", func(*Line) bool { return false }); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("want a timeout, got %v", err)
	}
	e, err := a.Close()
	if err != nil || e.Code != 0 || e.MaxRSS <= 0 {
		t.Fatalf("%+v %v", e, err)
	}
	if n := len(a.Lines(0, -1)); n != 7 {
		t.Fatalf("%d lines", n)
	}
}

func TestCloseKillsAStuckAgent(t *testing.T) {
	a, err := Start(Config{Argv: []string{"/bin/sh", "-c", "trap '' TERM; exec 0<&-; sleep 30"}, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if _, err := a.Close(); err == nil {
		t.Fatal("want an error for a killed agent")
	}
	if time.Since(t0) > 20*time.Second { // the agent would sleep 30 s
		t.Fatal("Close took too long")
	}
}

func TestPauseStopsReading(t *testing.T) {
	// An agent that writes lines without end.
	a, err := Start(Config{Argv: []string{"/bin/sh", "-c", `while :; do echo '{"type":"x"}'; done`}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Kill()
	if _, _, err := a.WaitEvent(0, "x"); err != nil {
		t.Fatal(err)
	}
	a.Pause()
	// At most the line being read when Pause was called still arrives.
	n := a.Mark() + 1
	if _, _, err := a.WaitWithin(300*time.Millisecond, n, "a line while paused", func(*Line) bool { return true }); err == nil {
		t.Fatal("lines arrived while paused")
	}
	a.Resume()
	if _, _, err := a.WaitWithin(10*time.Second, n+100, "lines after Resume", func(*Line) bool { return true }); err != nil {
		t.Fatal(err)
	}
}
