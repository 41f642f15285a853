package rpcmode

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An abort answers after the compaction it cut short, and the client may
// send the next compact (or navigate_tree) as soon as it has the
// compaction's answer, while the abort's goroutine has not yet returned
// from its wait. With a sync.WaitGroup counting the running compactions,
// that was an Add from zero concurrent with the abort's Wait: a data race
// (and a possible panic "WaitGroup is reused before previous Wait has
// returned") that the race detector reported once in
// testdata/rpc/summary_abort.txtar (abort's Wait against the next
// navigate_tree's Add), and the abort could wait for the next compaction
// as well, which it did not cut short. The abort answers after the
// commands running when it arrived, and only those. The sequence is
// repeated, since whether the abort's goroutine is still waiting depends
// on scheduling.
func TestCompactRightAfterAnAbortedOne(t *testing.T) {
	const rounds = 20
	turns := []string{
		`{"content":[{"type":"text","text":"first answer"}]}`,
		`{"content":[{"type":"text","text":"second answer"}]}`,
	}
	for range rounds + 1 {
		turns = append(turns, `{"content":[{"type":"text","text":"## Goal"}],"hang":true}`)
	}
	dir := t.TempDir()
	agentDir := filepath.Join(dir, "agent")
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agentDir, "settings.json"), []byte(`{"compaction": {"keepRecentTokens": 5}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sess, err := scriptedSession(dir, `{"turns":[`+strings.Join(turns, ",")+`]}`)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	pr, pw := io.Pipe()
	srv := New(sess, pw, Options{})
	out := frames(t, pr)
	srv.Start("")
	next(t, out, "ready")
	for _, msg := range []string{"one", "two"} {
		srv.Handle([]byte(fmt.Sprintf(`{"type":"prompt","message":%q}`, msg)))
		next(t, out, "agent_settled")
	}

	// until reads frames until one of type typ (a response: with id id),
	// keeping every response; it returns the response with id if one was
	// read before.
	answers := map[string]map[string]any{}
	until := func(typ, id string) map[string]any {
		t.Helper()
		if r := answers[id]; id != "" && r != nil {
			return r
		}
		deadline := time.After(waitLimit)
		for {
			select {
			case m, ok := <-out:
				if !ok {
					t.Fatalf("output ended before %s %s", typ, id)
				}
				if m["type"] == "response" {
					answers[m["id"].(string)] = m
				}
				if m["type"] == typ && (id == "" || m["id"] == id) {
					return m
				}
			case <-deadline:
				t.Fatalf("no %s %s", typ, id)
			}
		}
	}

	srv.Handle([]byte(`{"id":"c0","type":"compact"}`))
	for i := range rounds {
		until("compaction_start", "")
		srv.Handle([]byte(fmt.Sprintf(`{"id":"a%d","type":"abort"}`, i)))
		if r := until("response", fmt.Sprintf("c%d", i)); r["error"] != "Compaction aborted" {
			t.Fatalf("c%d: %v", i, r)
		}
		// At once: the abort may still be waiting.
		srv.Handle([]byte(fmt.Sprintf(`{"id":"c%d","type":"compact"}`, i+1)))
	}
	until("compaction_start", "")
	srv.Handle([]byte(fmt.Sprintf(`{"id":"a%d","type":"abort"}`, rounds)))
	until("response", fmt.Sprintf("c%d", rounds))
	for i := range rounds + 1 {
		if r := until("response", fmt.Sprintf("a%d", i)); r["success"] != true {
			t.Errorf("a%d: %v", i, r)
		}
	}
	srv.Finish()
	pw.Close()
}
