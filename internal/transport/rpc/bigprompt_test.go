package rpcmode

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
)

// countingWriter counts what it is given and keeps nothing.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// allocated returns the bytes the process allocated while fn ran.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A huge prompt is read, decoded, written to the session, sent through the
// run and echoed in message_start, message_end and agent_end without being
// copied over and over: the bytes allocated from the line to agent_end
// stay within a few times its size (they were 30 times it).
func TestHugePromptIsNotCopiedOverAndOver(t *testing.T) {
	const size = 8 << 20
	const unit = "a line of a huge prompt, \"quoted\" and <tagged>\n"
	text := strings.Repeat(unit, size/len(unit)+1)[:size]
	msg, _ := json.Marshal(text)
	line := append(append([]byte(`{"id":"p1","type":"prompt","message":`), msg...), "}\n"...)
	sess := newScriptedSession(t, `{"turns":[{"content":[{"type":"text","text":"read it"}]}]}`)
	out := &countingWriter{}
	srv := New(sess, out, Options{DeltaInterval: 0})
	in := bytes.NewReader(line)
	line = nil
	n := allocated(func() {
		if err := srv.Serve(in, nil); err != nil && err != io.EOF {
			t.Error(err)
		}
	})
	if out.n < 3*size {
		t.Fatalf("%d bytes written: the prompt should be echoed in message_start, message_end and agent_end", out.n)
	}
	t.Logf("%d MB allocated for a %d MB prompt (%.1f×)", n>>20, size>>20, float64(n)/size)
	if n > 6*size {
		t.Fatalf("%d MB allocated for a %d MB prompt: more than 6×", n>>20, size>>20)
	}
}
