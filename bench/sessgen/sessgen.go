// Package sessgen writes large, realistic session files in pi's JSONL
// format (version 3, docs/sessions.md) for benchmarks: a model change, a
// thinking level change, then cycles of a user prompt, an assistant turn
// with thinking and a bash tool call, its tool result, and an assistant
// answer (about 550 bytes per entry). Optionally the tree branches and
// carries labels. The same Options give the same bytes.
package sessgen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Options shape a generated session.
type Options struct {
	Entries int    // entries after the header
	Seed    uint64 // content and ids
	Cwd     string // header cwd
	// BranchEvery, when > 0, makes every BranchEvery-th entry a sibling of
	// its predecessor's parent chain (a fork 3 entries back), so the tree
	// has side branches. The leaf stays the last entry.
	BranchEvery int
	// LabelEvery, when > 0, adds a label entry every LabelEvery entries.
	LabelEvery int
	// Start is the header timestamp (zero: 2026-01-01 + Seed minutes).
	Start time.Time
}

const timeFormat = "2006-01-02T15:04:05.000Z"

var vocabulary = strings.Fields(`the a session entry tool call result model context branch label
test code function error value string number list map read write edit bash find grep package
import return struct interface method buffer stream reply delta frame agent provider cache index
parse encode decode file line path build run check fix`)

func words(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocabulary[r.IntN(len(vocabulary))])
	}
	return b.String()
}

func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

const usageFmt = `{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":0,"totalTokens":%d,"cost":{"input":0.0032,"output":0.0015,"cacheRead":0.0001,"cacheWrite":0,"total":0.0048}}`

// ID returns the session id Write uses for Options.Seed n.
func ID(n uint64) string {
	return fmt.Sprintf("019cf3a0-%04x-7000-8000-%012x", n&0xffff, n&0xffffffffffff)
}

// Write writes one session to w and returns the leaf entry id.
func Write(w io.Writer, o Options) (string, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	r := rand.New(rand.NewPCG(o.Seed, 0x5e55))
	t0 := o.Start
	if t0.IsZero() {
		t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(o.Seed) * time.Minute)
	}
	cwd := o.Cwd
	if cwd == "" {
		cwd = "/home/u/proj"
	}
	fmt.Fprintf(bw, `{"type":"session","version":3,"id":"%s","timestamp":"%s","cwd":%s}`+"\n", ID(o.Seed), t0.UTC().Format(timeFormat), js(cwd))
	ids := make([]string, 0, o.Entries)
	seen := make(map[string]bool, o.Entries)
	newID := func() string {
		for {
			id := fmt.Sprintf("%08x", r.Uint32())
			if !seen[id] {
				seen[id] = true
				return id
			}
		}
	}
	msgTS := t0.UnixMilli()
	cycle := 0
	var lastCall string
	for i := 0; i < o.Entries; i++ {
		id := newID()
		parent := "null"
		if n := len(ids); n > 0 {
			p := n - 1
			if o.BranchEvery > 0 && i%o.BranchEvery == 0 && n > 4 {
				p = n - 4
			}
			parent = `"` + ids[p] + `"`
		}
		ts := t0.Add(time.Duration(i) * time.Second).UTC().Format(timeFormat)
		msgTS += 1000
		head := fmt.Sprintf(`"id":"%s","parentId":%s,"timestamp":"%s"`, id, parent, ts)
		switch {
		case i == 0:
			fmt.Fprintf(bw, `{"type":"model_change",%s,"provider":"mock","modelId":"mock-model"}`, head)
		case i == 1:
			fmt.Fprintf(bw, `{"type":"thinking_level_change",%s,"thinkingLevel":"off"}`, head)
		case o.LabelEvery > 0 && i%o.LabelEvery == 0 && len(ids) > 2:
			fmt.Fprintf(bw, `{"type":"label",%s,"targetId":"%s","label":%s}`, head, ids[len(ids)-2], js("checkpoint "+words(r, 10)))
		default:
			var msg string
			switch cycle % 4 {
			case 0:
				msg = fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%s}],"timestamp":%d}`, js(words(r, 100)), msgTS)
			case 1:
				lastCall = fmt.Sprintf("call_%d_%d", o.Seed, i)
				msg = fmt.Sprintf(`{"role":"assistant","content":[{"type":"thinking","thinking":%s,"thinkingSignature":"sig"},{"type":"toolCall","id":"%s","name":"bash","arguments":{"command":%s}}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":`+usageFmt+`,"stopReason":"toolUse","timestamp":%d,"responseId":"resp_%d"}`,
					js(words(r, 120)), lastCall, js("grep -rn "+words(r, 30)), 1000+i, 50, 800, 1850+i, msgTS, i)
			case 2:
				msg = fmt.Sprintf(`{"role":"toolResult","toolCallId":"%s","toolName":"bash","content":[{"type":"text","text":%s}],"isError":false,"timestamp":%d}`,
					lastCall, js(words(r, 250)+"\n"), msgTS)
			case 3:
				msg = fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":`+usageFmt+`,"stopReason":"stop","timestamp":%d}`,
					js(words(r, 180)), 2000+i, 120, 1500, 3620+i, msgTS)
			}
			cycle++
			fmt.Fprintf(bw, `{"type":"message",%s,"message":%s}`, head, msg)
		}
		bw.WriteByte('\n')
		ids = append(ids, id)
	}
	leaf := ""
	if len(ids) > 0 {
		leaf = ids[len(ids)-1]
	}
	return leaf, bw.Flush()
}

// WriteFile writes one session into dir under pi's file name and returns
// its path.
func WriteFile(dir string, o Options) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	t0 := o.Start
	if t0.IsZero() {
		t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(o.Seed) * time.Minute)
		o.Start = t0
	}
	name := strings.NewReplacer(":", "-", ".", "-").Replace(t0.UTC().Format(timeFormat)) + "_" + ID(o.Seed) + ".jsonl"
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		return "", err
	}
	if _, err := Write(f, o); err != nil {
		f.Close()
		return "", err
	}
	return p, f.Close()
}

// WriteMany writes count sessions of entries each into dir (seeds 1..count).
func WriteMany(dir string, count, entries int, cwd string) error {
	for i := 1; i <= count; i++ {
		if _, err := WriteFile(dir, Options{Entries: entries, Seed: uint64(i), Cwd: cwd}); err != nil {
			return err
		}
	}
	return nil
}
