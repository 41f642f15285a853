package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
)

// Generated sessions for benchmarks: a realistic mix of user prompts,
// assistant turns with thinking and tool calls, and tool results.

var words = strings.Fields("the a session file entry tool call result model context branch compaction label go test code function error value string number list map read write edit bash find grep package import return struct interface method")

func sentence(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

func q(s string) string { return string(jsonx.MustMarshal(s)) }

const genUsage = `{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":0,"totalTokens":%d,"cost":{"input":0.0032,"output":0.0015,"cacheRead":0.0001,"cacheWrite":0,"total":0.0048}}`

// genMessages returns n raw messages cycling through the common roles.
func genMessages(n int) [][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([][]byte, 0, n)
	ts := int64(1773614400000)
	for i := 0; len(out) < n; i++ {
		ts += 1000
		switch i % 4 {
		case 0:
			out = append(out, []byte(fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%s}],"timestamp":%d}`, q(sentence(r, 100)), ts)))
		case 1:
			out = append(out, []byte(fmt.Sprintf(`{"role":"assistant","content":[{"type":"thinking","thinking":%s,"thinkingSignature":"sig"},{"type":"toolCall","id":"call_%d","name":"bash","arguments":{"command":%s}}],"api":"openai-completions","provider":"mock","model":"mock-1","usage":`+genUsage+`,"stopReason":"toolUse","timestamp":%d,"responseId":"resp_%d","durationMs":420}`,
				q(sentence(r, 120)), i, q("grep -rn "+sentence(r, 30)), 1000+i, 50, 800, 1850+i, ts, i)))
		case 2:
			out = append(out, []byte(fmt.Sprintf(`{"role":"toolResult","toolCallId":"call_%d","toolName":"bash","content":[{"type":"text","text":%s}],"isError":false,"durationMs":12,"timestamp":%d}`,
				i-1, q(sentence(r, 250)+"\n"), ts)))
		case 3:
			out = append(out, []byte(fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}],"api":"openai-completions","provider":"mock","model":"mock-1","usage":`+genUsage+`,"stopReason":"stop","timestamp":%d,"durationMs":900}`,
				q(sentence(r, 180)), 2000+i, 120, 1500, 3620+i, ts)))
		}
	}
	return out
}

// genSession returns the bytes of a linear session of n entries (header
// excluded) and its id.
func genSession(n int, key uint64, cwd string) []byte {
	r := rand.New(rand.NewPCG(key, 7))
	id := fmt.Sprintf("019cf3a0-%04x-7000-8000-%012x", key&0xffff, key)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(key) * time.Minute)
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"type":"session","version":3,"id":"%s","timestamp":"%s","cwd":%s}`+"\n", id, t0.Format(TimeFormat), q(cwd))
	msgs := genMessages(n)
	parent := "null"
	for i := 0; i < n; i++ {
		eid := fmt.Sprintf("%08x", uint32(r.Uint64()))
		ts := t0.Add(time.Duration(i) * time.Second).Format(TimeFormat)
		switch i {
		case 0:
			fmt.Fprintf(&b, `{"type":"model_change","id":"%s","parentId":%s,"timestamp":"%s","provider":"mock","modelId":"mock-1"}`, eid, parent, ts)
		case 1:
			fmt.Fprintf(&b, `{"type":"thinking_level_change","id":"%s","parentId":%s,"timestamp":"%s","thinkingLevel":"off"}`, eid, parent, ts)
		default:
			fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":%s,"timestamp":"%s","message":%s}`, eid, parent, ts, msgs[i-2])
		}
		b.WriteByte('\n')
		parent = `"` + eid + `"`
	}
	return b.Bytes()
}

func writeSessions(tb testing.TB, dir string, count, entries int) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < count; i++ {
		data := genSession(entries, uint64(i+1), "/home/u/proj")
		name := fmt.Sprintf("2026-01-01T00-00-00-000Z_%06d.jsonl", i)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func BenchmarkList2000(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "sessions", "--home-u-proj--")
	writeSessions(b, dir, 2000, 50)
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			ClearListCache()
			b.StartTimer()
			l, err := List(dir, "")
			if err != nil || len(l) != 2000 {
				b.Fatalf("%d %v", len(l), err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		List(dir, "")
		for b.Loop() {
			l, err := List(dir, "")
			if err != nil || len(l) != 2000 {
				b.Fatalf("%d %v", len(l), err)
			}
		}
	})
}

// BenchmarkOpen20000: Open of a 20000-entry session (11 MB), then what
// switch_session needs of it (info: the context's message count, model
// and thinking level), or the whole context, every message decoded, as
// the first prompt after a switch needs it (context).
func BenchmarkOpen20000(b *testing.B) {
	p := filepath.Join(b.TempDir(), "big.jsonl")
	data := genSession(20000, 42, "/home/u/proj")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("info", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			s, _, err := Open(p)
			if err != nil {
				b.Fatal(err)
			}
			if n := s.Info().MessageCount; n != 19998 {
				b.Fatalf("%d messages", n)
			}
		}
	})
	b.Run("context", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			s, _, err := Open(p)
			if err != nil {
				b.Fatal(err)
			}
			ctx := s.BuildContext()
			if len(ctx.Messages) != 19998 {
				b.Fatalf("%d messages", len(ctx.Messages))
			}
		}
	})
}

// BenchmarkAnswer20000: the data of get_messages and get_entries for a
// 20000-entry session just opened, streamed (MessagesJSON, EntriesJSON
// written through a 64 kB buffer, as the RPC writer does) and, for
// comparison, encoded into one buffer from decoded messages as before.
func BenchmarkAnswer20000(b *testing.B) {
	p := filepath.Join(b.TempDir(), "big.jsonl")
	data := genSession(20000, 43, "/home/u/proj")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
	s, _, err := Open(p)
	if err != nil {
		b.Fatal(err)
	}
	out := bufio.NewWriterSize(io.Discard, 64<<10)
	stream := func(b *testing.B, list func() (*JSONArray, error)) {
		b.ReportAllocs()
		var n int64
		for b.Loop() {
			a, err := list()
			if err != nil {
				b.Fatal(err)
			}
			if n, err = a.WriteTo(out); err != nil {
				b.Fatal(err)
			}
			out.Flush()
		}
		b.SetBytes(n)
	}
	b.Run("messages_streamed", func(b *testing.B) { stream(b, s.MessagesJSON) })
	b.Run("entries_streamed", func(b *testing.B) {
		stream(b, func() (*JSONArray, error) { return EntriesJSON(s.Entries()) })
	})
	b.Run("messages_encoded", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			m, err := ai.Messages(s.BuildContext().Messages).MarshalJSON()
			if err != nil {
				b.Fatal(err)
			}
			n = len(m)
		}
		b.SetBytes(int64(n))
	})
	b.Run("entries_encoded", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			all := s.Entries()
			raws := make([]json.RawMessage, 0, len(all))
			for _, e := range all {
				raws = append(raws, json.RawMessage(e.Raw))
			}
			leaf := s.LeafID()
			m, err := jsonx.Marshal(struct {
				Entries []json.RawMessage `json:"entries"`
				LeafID  *string           `json:"leafId"`
			}{raws, &leaf})
			if err != nil {
				b.Fatal(err)
			}
			n = len(m)
		}
		b.SetBytes(int64(n))
	})
}
