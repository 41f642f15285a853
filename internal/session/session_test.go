package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		runChild()
		return
	}
	warnOutput = io.Discard
	code := m.Run()
	if !reflect.ValueOf(noFields).IsZero() {
		fmt.Fprintf(os.Stderr, "the shared empty Fields of message entries was written to: %+v\n", noFields)
		code = 1
	}
	os.Exit(code)
}

// copyFixture copies testdata/name into a temp dir and returns its path.
func copyFixture(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustOpen(t testing.TB, path string) (*Session, LoadReport) {
	t.Helper()
	s, rep, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, rep
}

// validLines drops blank and malformed lines (what a load keeps).
func validLines(data []byte) []byte {
	var out []byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 || !json.Valid(l) {
			continue
		}
		out = append(out, l...)
		out = append(out, '\n')
	}
	return out
}

func TestFixturesRoundTrip(t *testing.T) {
	cases := []struct {
		name    string
		skipped int
		torn    bool
		entries int
	}{
		{"v3.jsonl", 0, false, 8},
		{"branches.jsonl", 0, false, 8},
		{"compaction.jsonl", 0, false, 12},
		{"labels.jsonl", 0, false, 8},
		{"custom.jsonl", 0, false, 9},
		{"unknown.jsonl", 0, false, 6},
		{"torn.jsonl", 1, true, 2},
		{"garbage-first.jsonl", 4, false, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := copyFixture(t, c.name)
			orig, _ := os.ReadFile(p)
			s, rep := mustOpen(t, p)
			if rep.Skipped != c.skipped || rep.TornTail != c.torn || rep.Migrated {
				t.Errorf("report = %+v", rep)
			}
			if n := len(s.Entries()); n != c.entries {
				t.Errorf("entries = %d, want %d", n, c.entries)
			}
			got := s.Bytes()
			want := validLines(orig)
			if !bytes.Equal(got, want) {
				t.Errorf("write-back differs:\n got %s\nwant %s", got, want)
			}
			if c.skipped == 0 && !bytes.Equal(got, orig) {
				t.Errorf("not byte-identical to the file")
			}
			// Nothing was written.
			now, _ := os.ReadFile(p)
			if !bytes.Equal(now, orig) {
				t.Errorf("file changed by loading")
			}
			// Every entry re-encodes to its raw line when it is of a known
			// type and was written by pi (no unknown fields).
			for _, e := range s.Entries() {
				if len(e.Extra) > 0 || e.Type == "" {
					continue
				}
				if e.Type == TypeMessage {
					if _, ok := e.Message().(*ai.UnknownMessage); ok || e.Message() == nil {
						continue
					}
				}
				c := Entry{Type: e.Type, ID: e.ID, ParentID: e.ParentID, Timestamp: e.Timestamp, Fields: e.Fields, Extra: e.Extra}
				c.setMessage(e.Message(), nil)
				if err := encode(&c); err != nil {
					continue
				}
				if !bytes.Equal(c.Raw, e.Raw) {
					t.Errorf("re-encoding %s %s:\n got %s\nwant %s", e.Type, e.ID, c.Raw, e.Raw)
				}
			}
		})
	}
}

func TestUnknownKept(t *testing.T) {
	s, _ := mustOpen(t, copyFixture(t, "unknown.jsonl"))
	h := s.Header()
	if v, ok := h.Extra.Get("futureHeaderField"); !ok || string(v) != "true" {
		t.Errorf("header extra = %v", h.Extra)
	}
	e := s.Entry("90000001")
	if e.Type != "service_tier_change" || len(e.Extra) != 2 || e.Extra[0].Key != "tier" {
		t.Errorf("unknown entry = %+v", e)
	}
	if e := s.Entry("90000002"); len(e.Extra) != 1 || e.Extra[0].Key != "entryExtra" {
		t.Errorf("unknown field in message entry: %+v", e.Extra)
	}
	if m, ok := s.Entry("90000003").Message().(*ai.UnknownMessage); !ok || m.Role != "futureRole" {
		t.Errorf("unknown role = %#v", s.Entry("90000003").Message())
	}
	am := s.Entry("90000004").Message().(*ai.AssistantMessage)
	if am.Content[1].Type != "futureBlock" {
		t.Errorf("unknown block = %+v", am.Content[1])
	}
	if e := s.Entry("90000006"); e.Provider != "p" || e.ModelID != "m" || len(e.Extra) != 1 {
		t.Errorf("model_change = %+v", e)
	}
	// Appending keeps everything before byte for byte.
	p := s.File()
	before, _ := os.ReadFile(p)
	if _, err := s.AppendMessage(&ai.UserMessage{Content: ai.StringContent("more"), Timestamp: 1}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p)
	if !bytes.HasPrefix(after, before) || bytes.Count(after, []byte("\n")) != bytes.Count(before, []byte("\n"))+1 {
		t.Errorf("append changed the file:\n%s", after)
	}
}

func TestNotSession(t *testing.T) {
	p := copyFixture(t, "not-session.jsonl")
	orig, _ := os.ReadFile(p)
	_, _, err := Open(p)
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("err = %v", err)
	}
	now, _ := os.ReadFile(p)
	if !bytes.Equal(now, orig) {
		t.Error("file was changed")
	}
	garbage := filepath.Join(t.TempDir(), "g.jsonl")
	os.WriteFile(garbage, []byte("nope\n{bad\n"), 0o644)
	if _, _, err := Open(garbage); err == nil || !strings.Contains(err.Error(), garbage) {
		t.Fatalf("garbage err = %v", err)
	}
}

func TestEmptyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(p, nil, 0o644)
	s, _ := mustOpen(t, p)
	if s.LeafID() != "" || len(s.Entries()) != 0 {
		t.Fatal("not empty")
	}
	s.AppendThinkingLevelChange("off")
	if fi, _ := os.Stat(p); fi.Size() != 0 {
		t.Error("written before the first message")
	}
	s.AppendMessage(&ai.UserMessage{Content: ai.StringContent("hi"), Timestamp: 1})
	s2, rep := mustOpen(t, p)
	if len(s2.Entries()) != 2 || rep.Skipped != 0 || s2.ID() != s.ID() {
		t.Errorf("reloaded %d entries, %+v", len(s2.Entries()), rep)
	}
}

func TestTornTailAppend(t *testing.T) {
	p := copyFixture(t, "torn.jsonl")
	orig, _ := os.ReadFile(p)
	s, rep := mustOpen(t, p)
	if !rep.TornTail || s.LeafID() != "70000002" {
		t.Fatalf("rep %+v leaf %s", rep, s.LeafID())
	}
	e, err := s.AppendMessage(&ai.UserMessage{Content: ai.StringContent("after"), Timestamp: 5})
	if err != nil {
		t.Fatal(err)
	}
	now, _ := os.ReadFile(p)
	want := append(append(append([]byte{}, orig...), '\n'), e.Raw...)
	want = append(want, '\n')
	if !bytes.Equal(now, want) {
		t.Fatalf("file after append:\n%s", now)
	}
	s2, rep2 := mustOpen(t, p)
	if rep2.Skipped != 1 || rep2.TornTail || len(s2.Entries()) != 3 || s2.LeafID() != e.ID {
		t.Errorf("reload: %+v, %d entries", rep2, len(s2.Entries()))
	}
	if *s2.Entry(e.ID).ParentID != "70000002" {
		t.Error("parent of the new entry")
	}
}

func TestTornValidLastLine(t *testing.T) {
	// A complete last entry without its newline is kept; the next append
	// starts on a new line.
	data, _ := os.ReadFile("testdata/v3.jsonl")
	p := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(p, bytes.TrimRight(data, "\n"), 0o644)
	s, rep := mustOpen(t, p)
	if rep.Skipped != 0 || rep.TornTail || len(s.Entries()) != 8 {
		t.Fatalf("%+v %d", rep, len(s.Entries()))
	}
	e, _ := s.AppendSessionInfo("x")
	now, _ := os.ReadFile(p)
	if !bytes.Equal(now, append(append([]byte{}, data...), append(e.Raw, '\n')...)) {
		t.Errorf("got %s", now)
	}
}

func TestGarbageFirst(t *testing.T) {
	s, rep := mustOpen(t, copyFixture(t, "garbage-first.jsonl"))
	if rep.Skipped != 4 || s.ID() != "019cf3a0-0000-7000-8000-000000000008" || s.LeafID() != "60000002" {
		t.Errorf("%+v %s %s", rep, s.ID(), s.LeafID())
	}
}

func TestWarningLogged(t *testing.T) {
	var buf bytes.Buffer
	warnOutput = &buf
	defer func() { warnOutput = io.Discard }()
	p := copyFixture(t, "garbage-first.jsonl")
	mustOpen(t, p)
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, p) || !strings.Contains(out, "4") {
		t.Errorf("warning = %q", out)
	}
}

func TestMigrateV1(t *testing.T) {
	p := copyFixture(t, "v1.jsonl")
	orig, _ := os.ReadFile(p)
	s, rep := mustOpen(t, p)
	if !rep.Migrated {
		t.Fatal("not migrated")
	}
	now, _ := os.ReadFile(p)
	if !bytes.Equal(now, s.Bytes()) {
		t.Fatal("file does not hold the migrated session")
	}
	lines := strings.Split(strings.TrimSuffix(string(now), "\n"), "\n")
	origLines := strings.Split(strings.TrimSuffix(string(orig), "\n"), "\n")
	if len(lines) != len(origLines) {
		t.Fatalf("%d lines", len(lines))
	}
	// JS appends new properties at the end of the object.
	if lines[0] != `{"type":"session","id":"6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d","timestamp":"2025-06-01T08:00:00.000Z","cwd":"/home/u/older","version":3}` {
		t.Errorf("header = %s", lines[0])
	}
	h := s.Header()
	if h.Version != 3 {
		t.Errorf("version %d", h.Version)
	}
	es := s.Entries()
	for i, e := range es {
		if len(e.ID) != 8 {
			t.Errorf("id %q", e.ID)
		}
		if i == 0 && e.ParentID != nil || i > 0 && (e.ParentID == nil || *e.ParentID != es[i-1].ID) {
			t.Errorf("entry %d parent %v", i, e.ParentID)
		}
		want := strings.TrimSuffix(origLines[i+1], "}")
		if e.Type == TypeCompaction {
			want = strings.Replace(want, `,"firstKeptEntryIndex":4`, "", 1)
		}
		wantLine := want + `,"id":"` + e.ID + `","parentId":` + string(jsonx.MustMarshal(e.ParentID))
		if e.Type == TypeCompaction {
			wantLine += `,"firstKeptEntryId":"` + es[3].ID + `"`
		}
		if e.Type == TypeMessage && strings.Contains(wantLine, "hookMessage") {
			wantLine = strings.Replace(wantLine, `"role":"hookMessage"`, `"role":"custom"`, 1)
		}
		wantLine += "}"
		if string(e.Raw) != wantLine {
			t.Errorf("entry %d:\n got %s\nwant %s", i, e.Raw, wantLine)
		}
	}
	if c := es[5]; c.FirstKeptEntryID != es[3].ID || c.TokensBefore != 1234 {
		t.Errorf("compaction = %+v", c)
	}
	if m, ok := es[6].Message().(*ai.CustomMessage); !ok || m.CustomType != "note" {
		t.Errorf("hookMessage = %#v", es[6].Message())
	}
	// Context: summary, kept from the second question, then the rest.
	ctx := s.BuildContext()
	roles := []string{}
	for _, m := range ctx.Messages {
		roles = append(roles, m.MessageRole())
	}
	if strings.Join(roles, ",") != "compactionSummary,user,assistant,custom,user" {
		t.Errorf("roles = %v", roles)
	}
	if ctx.Provider != "mock" || ctx.ModelID != "mock-1" {
		t.Errorf("model = %s/%s", ctx.Provider, ctx.ModelID)
	}
	// No temp file left behind; reopening does not migrate again.
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Errorf("dir has %d files", len(ents))
	}
	_, rep2 := mustOpen(t, p)
	if rep2.Migrated {
		t.Error("migrated twice")
	}
}

func TestMigrateV2(t *testing.T) {
	p := copyFixture(t, "v2.jsonl")
	orig, _ := os.ReadFile(p)
	s, rep := mustOpen(t, p)
	if !rep.Migrated {
		t.Fatal("not migrated")
	}
	now, _ := os.ReadFile(p)
	want := strings.Replace(string(orig), `"version":2`, `"version":3`, 1)
	want = strings.Replace(want, `"role":"hookMessage"`, `"role":"custom"`, 1)
	if string(now) != want {
		t.Errorf("migrated:\n%s\nwant\n%s", now, want)
	}
	if m, ok := s.Entry("b0000003").Message().(*ai.CustomMessage); !ok || m.Content.Str != "Remember the tests." {
		t.Errorf("%#v", s.Entry("b0000003").Message())
	}
	ctx := s.BuildContext()
	if ctx.ThinkingLevel != "medium" || len(ctx.Messages) != 3 {
		t.Errorf("ctx = %+v", ctx)
	}
}

// ---- deterministic writing ----

type seqReader struct{ n byte }

func (r *seqReader) Read(p []byte) (int, error) {
	for i := range p {
		r.n++
		p[i] = r.n
	}
	return len(p), nil
}

func fixedClock(t *testing.T) {
	t.Helper()
	base := time.Date(2026, 3, 15, 22, 40, 18, 123e6, time.UTC)
	var mu sync.Mutex
	n := 0
	oldNow, oldRand := nowFunc, randReader
	nowFunc = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return base.Add(time.Duration(n) * time.Millisecond)
	}
	randReader = &seqReader{}
	t.Cleanup(func() { nowFunc, randReader = oldNow, oldRand })
}

func TestKeyOrderGolden(t *testing.T) {
	fixedClock(t)
	dir := t.TempDir()
	s, err := New(Options{Dir: dir, Cwd: "/home/u/proj", ParentSession: "/x/prev.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	must := func(e *Entry, err error) *Entry {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	mc := must(s.AppendModelChange("anthropic", "claude-sonnet-4"))
	must(s.AppendThinkingLevelChange("high"))
	if _, err := os.Stat(s.File()); !os.IsNotExist(err) {
		t.Fatal("file created before the first message")
	}
	must(s.AppendMessage(&ai.SystemMessage{Content: ai.StringContent("sys"), Timestamp: 1}))
	if _, err := os.Stat(s.File()); !os.IsNotExist(err) {
		t.Fatal("file created by a system message")
	}
	u := must(s.AppendMessage(&ai.UserMessage{Content: ai.StringContent("hi <&>"), Timestamp: 2}))
	if _, err := os.Stat(s.File()); err != nil {
		t.Fatal("file not created at the first user message")
	}
	must(s.AppendMessage(&ai.AssistantMessage{Content: []ai.Content{ai.Text("yo")}, API: "a", Provider: "p", Model: "m", StopReason: "stop", Timestamp: 3}))
	must(s.AppendCompaction("sum", u.ID, 42, json.RawMessage(`{"readFiles":[],"modifiedFiles":[]}`), false))
	must(s.AppendCompactionEntry(Compaction{Summary: "s2", TokensBefore: 7, Usage: &ai.Usage{Input: 1}, FromHook: true, SystemMessage: &ai.SystemMessage{Content: ai.StringContent("cp"), Timestamp: 9}}))
	must(s.AppendBranchSummary("root", "bs", nil, false))
	must(s.AppendCustom("ext", json.RawMessage(`{"a":1}`)))
	must(s.AppendCustom("ext2", nil))
	must(s.AppendCustomMessage("cm", ai.StringContent("c"), true, json.RawMessage(`{"d":1}`)))
	must(s.AppendMessage(&ai.CustomMessage{CustomType: "cm2", Content: ai.BlockContent(ai.Text("t")), Display: false, Timestamp: 99}))
	must(s.AppendLabel(mc.ID, "start"))
	must(s.AppendLabel(mc.ID, ""))
	must(s.AppendSessionInfo("  my\n session  "))
	must(s.AppendUsage("cache_warm", "p", "m", ai.Usage{Input: 5}, ""))
	must(s.AppendUsage("cache_warm", "p", "m", ai.Usage{}, "n"))
	must(s.AppendContextEdit(u.ID, json.RawMessage(`{"content":"x"}`)))
	must(s.AppendContextEdit(u.ID, nil))
	if _, err := s.AppendLabel("nope", "x"); err == nil || err.Error() != "Entry nope not found" {
		t.Errorf("label err = %v", err)
	}
	got, _ := os.ReadFile(s.File())
	want, err := os.ReadFile("testdata/golden-written.jsonl")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		os.WriteFile("testdata/golden-written.jsonl", got, 0o644)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range gl {
			if i >= len(wl) || gl[i] != wl[i] {
				w := ""
				if i < len(wl) {
					w = wl[i]
				}
				t.Errorf("line %d:\n got %s\nwant %s", i+1, gl[i], w)
			}
		}
	}
	if filepath.Base(s.File()) != "2026-03-15T22-40-18-125Z_"+s.ID()+".jsonl" {
		t.Errorf("file name %s", s.File())
	}
	if s.Name() != "my session" {
		t.Errorf("name %q", s.Name())
	}
	if len(s.Labels()) != 0 {
		t.Errorf("labels %v", s.Labels())
	}
	// The file reloads to the same bytes.
	s2, _ := mustOpen(t, s.File())
	if !bytes.Equal(s2.Bytes(), got) {
		t.Error("reload differs")
	}
}

func TestSessionID(t *testing.T) {
	id := NewUUIDv7()
	if len(id) != 36 || id[14] != '7' || !strings.ContainsAny(id[19:20], "89ab") {
		t.Errorf("uuid %s", id)
	}
	if _, err := New(Options{InMemory: true, ID: "bad id"}); err == nil {
		t.Error("bad explicit id accepted")
	}
	s, err := New(Options{InMemory: true, ID: "my.id-1"})
	if err != nil || s.ID() != "my.id-1" || s.File() != "" {
		t.Errorf("%v %v", s, err)
	}
}

func TestEntryIDsUnique(t *testing.T) {
	s, _ := New(Options{InMemory: true})
	seen := map[string]bool{}
	for i := 0; i < 3000; i++ {
		e, _ := s.AppendCustom("x", nil)
		if len(e.ID) != 8 || seen[e.ID] {
			t.Fatalf("id %q", e.ID)
		}
		seen[e.ID] = true
	}
	// Collisions: a source that always returns the same bytes falls back
	// to a full UUID.
	old := randReader
	randReader = &constReader{}
	defer func() { randReader = old }()
	s2, _ := New(Options{InMemory: true})
	a, _ := s2.AppendCustom("x", nil)
	b, _ := s2.AppendCustom("x", nil)
	if a.ID != "07070707" || len(b.ID) != 36 {
		t.Errorf("ids %s %s", a.ID, b.ID)
	}
}

type constReader struct{}

func (constReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 7
	}
	return len(p), nil
}

func TestDirFor(t *testing.T) {
	if got := DirFor("/a/agent", "/home/u/proj"); got != "/a/agent/sessions/--home-u-proj--" {
		t.Error(got)
	}
	if got := DirFor("/a", "/"); got != "/a/sessions/----" {
		t.Error(got)
	}
}

func TestConcurrentAppends(t *testing.T) {
	dir := t.TempDir()
	s, _ := New(Options{Dir: dir, Cwd: "/x"})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, err := s.AppendMessage(&ai.UserMessage{Content: ai.StringContent("m"), Timestamp: int64(i)}); err != nil {
					t.Error(err)
				}
				_ = s.BuildContext()
				_ = s.Tree()
				_ = s.LeafID()
			}
		}()
	}
	wg.Wait()
	s.Close()
	s2, rep := mustOpen(t, s.File())
	if len(s2.Entries()) != 400 || rep.Skipped != 0 {
		t.Errorf("%d entries, %+v", len(s2.Entries()), rep)
	}
	if n := len(s2.Branch(s2.LeafID())); n != 400 {
		t.Errorf("chain %d", n)
	}
}

func TestFastDecodeMatches(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	n := 0
	extra := [][]byte{
		[]byte(`{"role":"user","content":"x","timestamp":1,"Content":"dup"}`),
		[]byte(`{"role":"user","content":null,"timestamp":1}`),
		[]byte(`{"role":"assistant","content":[{"type":"text","text":"a\u00e9\ud83d\ude00\n","extra":[1]}],"usage":{"input":1,"cost":{"total":0.5,"x":1}},"timestamp":1.5}`),
		[]byte(`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[{"type":"image","data":"AAA","mimeType":"image/png"}],"details":null,"usage":{"input":2},"isError":true,"durationMs":3,"nestedCalls":{"calls":[]},"timestamp":4,"z":{}}`),
		[]byte(`{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"n","arguments":{"a":1},"thoughtSignature":"s","argumentsError":"e","namespace":"ns"},{"type":"thinking","thinking":"t","redacted":true}],"endTurn":false,"durationMs":5,"timestamp":-3}`),
		[]byte(`{"role":"user","content":[{"type":"text","text":"\xff bad utf8"}],"timestamp":1}`),
		[]byte(`{"role":"user","content":[{"type":"image","url":"https://example.com/a.png"},{"type":"image","mimeType":"image/png","url":"http://example.com/b","alt":1}],"timestamp":1}`),
	}
	check := func(raw []byte) {
		n++
		want, werr := ai.DecodeMessage(raw)
		got, gerr := decodeMessage(raw)
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("decode %s:\n got %#v %v\nwant %#v %v", raw, got, gerr, want, werr)
		}
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, l := range bytes.Split(data, []byte("\n")) {
			if raw := messageRaw(l); raw != nil {
				check(raw)
			}
		}
	}
	for _, raw := range extra {
		check(raw)
	}
	for _, raw := range genMessages(50) {
		check(raw)
	}
	if n < 40 {
		t.Errorf("only %d messages checked", n)
	}
}

// A migration rewrites a session file that is a symbolic link through the
// link: its target gets the new content and the link stays.
func TestMigrateThroughLink(t *testing.T) {
	target := copyFixture(t, "v2.jsonl")
	link := filepath.Join(t.TempDir(), "linked.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, rep := mustOpen(t, link); !rep.Migrated {
		t.Fatal("not migrated")
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link replaced: %v", err)
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), `"version":3`) {
		t.Fatalf("target not migrated: %.80s", b)
	}
}
