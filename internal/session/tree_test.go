package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
)

func ids(es []*Entry) string {
	var s []string
	for _, e := range es {
		s = append(s, e.ID)
	}
	return strings.Join(s, ",")
}

func dumpTree(nodes []*TreeNode) string {
	var b strings.Builder
	var walk func(n *TreeNode)
	walk = func(n *TreeNode) {
		b.WriteString(n.Entry.ID)
		if n.Label != "" {
			b.WriteString("[" + n.Label + "]")
		}
		if len(n.Children) > 0 {
			b.WriteString("(")
			for i, c := range n.Children {
				if i > 0 {
					b.WriteString(" ")
				}
				walk(c)
			}
			b.WriteString(")")
		}
	}
	for i, n := range nodes {
		if i > 0 {
			b.WriteString(" | ")
		}
		walk(n)
	}
	return b.String()
}

func TestTree(t *testing.T) {
	s, _ := mustOpen(t, copyFixture(t, "branches.jsonl"))
	// Children by timestamp: branch B (22:40:03) before branch A (22:40:05)
	// although appended later; the orphan is a root.
	want := "c0000001(c0000002(c0000005(c0000006(c0000008)) c0000003(c0000004))) | c0000007"
	if got := dumpTree(s.Tree()); got != want {
		t.Errorf("tree\n got %s\nwant %s", got, want)
	}
	if s.LeafID() != "c0000008" {
		t.Errorf("leaf %s", s.LeafID())
	}
	if got := ids(s.Branch("c0000004")); got != "c0000001,c0000002,c0000003,c0000004" {
		t.Errorf("branch %s", got)
	}
	if err := s.SetLeaf("zzz"); err == nil || err.Error() != "Entry zzz not found" {
		t.Errorf("SetLeaf err %v", err)
	}
	s.SetLeaf("c0000004")
	ctx := s.BuildContext()
	if len(ctx.Messages) != 4 || ctx.Messages[3].(*ai.AssistantMessage).Content[0].Text != "A done" {
		t.Errorf("ctx %+v", ctx)
	}
	// A label appended after navigating is a child of the new leaf.
	l, _ := s.AppendLabel("c0000003", "here")
	if *l.ParentID != "c0000004" {
		t.Errorf("label parent %s", *l.ParentID)
	}
	s.ResetLeaf()
	if c := s.BuildContext(); len(c.Messages) != 0 || c.ThinkingLevel != "off" {
		t.Errorf("reset ctx %+v", c)
	}
	e, _ := s.AppendCustom("root", nil)
	if e.ParentID != nil {
		t.Error("not a root after ResetLeaf")
	}
}

func TestLabels(t *testing.T) {
	s, _ := mustOpen(t, copyFixture(t, "labels.jsonl"))
	labels := s.Labels()
	if len(labels) != 2 || labels["e0000001"] != "again" || labels["e0000002"] != "second" {
		t.Errorf("labels %v", labels)
	}
	tree := s.Tree()
	if tree[0].Label != "again" || tree[0].LabelTimestamp != "2026-03-15T22:40:07.000Z" {
		t.Errorf("root label %q %q", tree[0].Label, tree[0].LabelTimestamp)
	}
	// Labels are not in the context.
	if n := len(s.BuildContext().Messages); n != 3 {
		t.Errorf("%d messages", n)
	}
}

func TestContextCompaction(t *testing.T) {
	s, _ := mustOpen(t, copyFixture(t, "compaction.jsonl"))
	ctx := s.BuildContext()
	var got []string
	for _, m := range ctx.Messages {
		desc := m.MessageRole()
		switch v := m.(type) {
		case *ai.SystemMessage:
			desc += ":" + v.Content.PlainText()
		case *ai.UserMessage:
			desc += ":" + v.Content.PlainText()
		case *ai.AssistantMessage:
			desc += ":" + ai.JoinText(v.Content, "")
		case *ai.CompactionSummaryMessage:
			desc += ":" + v.Summary
		}
		got = append(got, desc)
	}
	// Checkpoint first, then the summary; the kept range starts at the
	// patch system message, which the checkpoint replaces; the failed
	// assistant message is hidden and "two" edited by context_edit.
	want := "system:You are pi (checkpoint).|compactionSummary:We talked about one.|user:two (edited)|assistant:reply two|user:three|assistant:reply three"
	if strings.Join(got, "|") != want {
		t.Errorf("context\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
	if ctx.EntryIDs[2] != "d0000005" || ctx.EntryIDs[0] != "" {
		t.Errorf("entry ids %v", ctx.EntryIDs)
	}
	// The edit is relative to the branch: at an earlier leaf it does not apply.
	c2 := s.ContextAt("d0000006")
	if n := len(c2.Messages); n != 6 || c2.Messages[4].(*ai.UserMessage).Content.PlainText() != "two" {
		t.Errorf("earlier leaf: %d messages", n)
	}
	llm := ConvertToLLM(ctx.Messages)
	if len(llm) != 5 {
		t.Fatalf("llm %d", len(llm))
	}
	sum := llm[0].(*ai.UserMessage).Content.Blocks[0].Text
	if sum != "The conversation history before this point was compacted into the following summary:\n\n<summary>\nWe talked about one.\n</summary>" {
		t.Errorf("summary text %q", sum)
	}
	if llm[0].MessageTimestamp() != time.Date(2026, 3, 15, 22, 40, 40, 0, time.UTC).UnixMilli() {
		t.Errorf("summary ts %d", llm[0].MessageTimestamp())
	}
}

func TestContextCustom(t *testing.T) {
	s, _ := mustOpen(t, copyFixture(t, "custom.jsonl"))
	ctx := s.BuildContext()
	roles := []string{}
	for _, m := range ctx.Messages {
		roles = append(roles, m.MessageRole())
	}
	if strings.Join(roles, ",") != "user,custom,custom,bashExecution,branchSummary,assistant" {
		t.Errorf("roles %v", roles)
	}
	llm := ConvertToLLM(ctx.Messages)
	texts := []string{}
	for _, m := range llm {
		if u, ok := m.(*ai.UserMessage); ok {
			texts = append(texts, u.Content.PlainText())
		}
	}
	want := []string{
		"hi",
		"Use tabs.",
		"block",
		"Ran `ls`\n```\nx\n\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/out.txt]",
		"The following is a summary of a branch that this conversation came back from:\n\n<summary>\nTried something else.</summary>",
	}
	if strings.Join(texts, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("texts\n%q\nwant\n%q", texts, want)
	}
	if u := llm[1].(*ai.UserMessage); u.Content.IsString || len(u.Content.Blocks) != 1 {
		t.Errorf("custom string content not turned into a block: %+v", u.Content)
	}
	if ctx.Provider != "mock" || ctx.ModelID != "mock-1" {
		t.Errorf("model %s %s", ctx.Provider, ctx.ModelID)
	}
	// Usage entries count nowhere in the context.
	if e := s.Entry("f0000008"); e.Usage == nil || e.Usage.Input != 1000 || e.Kind != "cache_warm" {
		t.Errorf("usage entry %+v", e)
	}
	bs := &ai.BashExecutionMessage{Command: "x", Cancelled: true}
	if BashExecutionText(bs) != "Ran `x`\n(no output)\n\n(command cancelled)" {
		t.Error(BashExecutionText(bs))
	}
	ex := true
	if n := len(ConvertToLLM([]ai.Message{&ai.BashExecutionMessage{ExcludeFromContext: ex}, &ai.SystemMessage{}})); n != 0 {
		t.Error("excluded bash or system message kept")
	}
}

func TestForkClone(t *testing.T) {
	p := copyFixture(t, "labels.jsonl")
	s, _ := mustOpen(t, p)
	dir := t.TempDir()
	if _, err := s.Fork("e0000002", dir); err == nil || err.Error() != "Invalid entry ID for forking" {
		t.Errorf("fork assistant: %v", err)
	}
	// Fork at the second user message: path up to its parent, labels
	// re-created after the path with their original timestamps.
	f, err := s.Fork("e0000008", dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.Header().ParentSession != p || filepath.Dir(f.File()) != dir {
		t.Errorf("header %+v", f.Header())
	}
	es := f.Entries()
	if len(es) != 4 || es[0].ID != "e0000001" || es[1].ID != "e0000002" {
		t.Fatalf("fork entries %s", ids(es))
	}
	// JS Map order: e0000001's label was cleared and set again, so it
	// comes after e0000002's.
	if es[2].Type != TypeLabel || *es[2].ParentID != "e0000002" || es[2].TargetID != "e0000002" || *es[2].Label != "second" || es[2].Timestamp != "2026-03-15T22:40:05.000Z" {
		t.Errorf("label 1 %s", es[2].Raw)
	}
	if *es[3].ParentID != es[2].ID || *es[3].Label != "again" || es[3].TargetID != "e0000001" {
		t.Errorf("label 2 %s", es[3].Raw)
	}
	// Written at once (it has a conversation), byte-identical path entries.
	data, err := os.ReadFile(f.File())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, f.Bytes()) {
		t.Error("fork file differs")
	}
	orig, _ := os.ReadFile(p)
	if !bytes.Contains(orig, append(es[1].Raw, '\n')) {
		t.Error("path entry re-encoded")
	}
	// Clone at the leaf: labels removed from the path and parentIds
	// re-chained over them.
	c, err := s.Clone("")
	if err != nil {
		t.Fatal(err)
	}
	ce := c.Entries()
	if ce[2].ID != "e0000008" || *ce[2].ParentID != "e0000002" {
		t.Errorf("clone re-chain: %s", ce[2].Raw)
	}
	if filepath.Dir(c.File()) != filepath.Dir(p) {
		t.Error("clone dir")
	}
	// Fork of a root user message: an empty session naming its parent.
	r, err := s.Fork("e0000001", dir)
	if err != nil || len(r.Entries()) != 0 || r.Header().ParentSession != p {
		t.Errorf("root fork %v", err)
	}
	if _, err := os.Stat(r.File()); !os.IsNotExist(err) {
		t.Error("empty fork written")
	}
	// Unsaved and empty sessions.
	n, _ := New(Options{Dir: dir, Cwd: "/x"})
	if _, err := n.Clone(""); err == nil || err.Error() != "Cannot clone session: no current entry selected" {
		t.Errorf("clone empty: %v", err)
	}
	n.AppendThinkingLevelChange("off")
	if _, err := n.Clone(""); err == nil || err.Error() != "This session has not been saved yet. Send a message before cloning or forking it." {
		t.Errorf("clone unsaved: %v", err)
	}
}

func TestListing(t *testing.T) {
	root := t.TempDir()
	agent := filepath.Join(root, "agent")
	dir := DirFor(agent, "/home/u/proj")
	os.MkdirAll(dir, 0o755)
	other := DirFor(agent, "/home/u/other")
	os.MkdirAll(other, 0o755)
	for _, f := range []string{"v3.jsonl", "branches.jsonl", "custom.jsonl", "garbage-first.jsonl", "not-session.jsonl"} {
		data, _ := os.ReadFile(filepath.Join("testdata", f))
		os.WriteFile(filepath.Join(dir, f), data, 0o644)
	}
	data, _ := os.ReadFile("testdata/labels.jsonl")
	os.WriteFile(filepath.Join(other, "labels.jsonl"), data, 0o644)

	l, err := List(dir, "")
	if err != nil || len(l) != 4 {
		t.Fatalf("list %d %v", len(l), err)
	}
	for i := 1; i < len(l); i++ {
		if l[i].Modified.After(l[i-1].Modified) {
			t.Error("not newest first")
		}
	}
	var v3 Info
	for _, i := range l {
		if strings.HasSuffix(i.Path, "v3.jsonl") {
			v3 = i
		}
	}
	if v3.ID != "019cf3a0-0000-7000-8000-000000000001" || v3.Name != "List files" || v3.MessageCount != 5 || v3.Cwd != "/home/u/proj" {
		t.Errorf("v3 info %+v", v3)
	}
	if !strings.HasPrefix(v3.FirstMessage, "List the files <here>") || !strings.HasSuffix(v3.AllMessagesText, "There are two files: a.txt and b.txt.") {
		t.Errorf("texts %q / %q", v3.FirstMessage, v3.AllMessagesText)
	}
	if v3.Created != time.Date(2026, 3, 15, 22, 40, 18, 123e6, time.UTC) || v3.Modified.UnixMilli() != 1773614400000+23000 {
		t.Errorf("times %v %v", v3.Created, v3.Modified)
	}
	all, _ := ListAll(filepath.Join(agent, "sessions"))
	if len(all) != 5 {
		t.Errorf("all %d", len(all))
	}
	if f, _ := List(dir, "/elsewhere"); len(f) != 0 {
		t.Error("cwd filter")
	}
	// Never stale: a changed file is read again.
	s, _ := mustOpen(t, filepath.Join(dir, "v3.jsonl"))
	s.AppendSessionInfo("renamed")
	l2, _ := List(dir, "")
	found := false
	for _, i := range l2 {
		if i.Path == s.File() && i.Name == "renamed" {
			found = true
		}
	}
	if !found {
		t.Error("stale listing")
	}
	// MostRecent by mtime, skipping invalid files.
	now := time.Now()
	os.Chtimes(filepath.Join(dir, "not-session.jsonl"), now.Add(time.Hour), now.Add(time.Hour))
	os.Chtimes(filepath.Join(dir, "branches.jsonl"), now.Add(time.Minute), now.Add(time.Minute))
	if p, _ := MostRecent(dir); filepath.Base(p) != "branches.jsonl" {
		t.Errorf("most recent %s", p)
	}
	// Resolve: path, local id prefix, then all.
	if p, _ := Resolve(agent, "/home/u/proj", "", "019cf3a0-0000-7000-8000-000000000002"); filepath.Base(p) != "branches.jsonl" {
		t.Errorf("resolve %s", p)
	}
	if p, _ := Resolve(agent, "/home/u/proj", "", "x/y.jsonl"); p != "/home/u/proj/x/y.jsonl" {
		t.Errorf("resolve path %s", p)
	}
	p, foreign, _ := ResolveWhere(agent, "/home/u/proj", "", "019cf3a0-0000-7000-8000-000000000004")
	if filepath.Base(p) != "labels.jsonl" || !foreign {
		t.Errorf("resolve other %s %v", p, foreign)
	}
	if _, err := Resolve(agent, "/home/u/proj", "", "zzz"); err == nil || err.Error() != "No session found matching 'zzz'" {
		t.Errorf("resolve err %v", err)
	}
}

func TestAppendRaw(t *testing.T) {
	s, _ := New(Options{InMemory: true})
	s.AppendCustom("a", nil)
	e, err := s.AppendRaw(json.RawMessage(`{"type":"mode_change","mode":"plan"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(e.Raw), `{"type":"mode_change","mode":"plan","id":"`) || e.ParentID == nil {
		t.Errorf("raw %s", e.Raw)
	}
}

func TestForkFrom(t *testing.T) {
	p := copyFixture(t, "labels.jsonl")
	before, _ := os.ReadFile(p)
	dir := t.TempDir()
	cwd := t.TempDir()
	f, err := ForkFrom(p, Options{Dir: dir, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, _ := mustOpen(t, p)
	h := f.Header()
	if h.ParentSession != p || h.Cwd != cwd || h.ID == src.ID() || filepath.Dir(f.File()) != dir {
		t.Errorf("header %+v", h)
	}
	// Every entry of the source, byte for byte, in file order.
	var want bytes.Buffer
	for _, e := range src.Entries() {
		want.Write(e.Raw)
		want.WriteByte('\n')
	}
	data, err := os.ReadFile(f.File())
	if err != nil {
		t.Fatalf("fork not written at once: %v", err)
	}
	_, body, _ := bytes.Cut(data, []byte("\n"))
	if !bytes.Equal(body, want.Bytes()) {
		t.Errorf("entries differ:\n%s\nwant\n%s", body, want.Bytes())
	}
	if f.LeafID() != src.LeafID() {
		t.Errorf("leaf %s, want %s", f.LeafID(), src.LeafID())
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
		t.Error("source changed")
	}
	// An explicit id is used, and checked.
	g, err := ForkFrom(p, Options{Dir: dir, Cwd: cwd, ID: "my-fork"})
	if err != nil || g.ID() != "my-fork" {
		t.Errorf("explicit id: %v", err)
	}
	if _, err := ForkFrom(p, Options{Dir: dir, Cwd: cwd, ID: "bad id"}); err == nil {
		t.Error("invalid id accepted")
	}
	// An empty or missing source is an error naming it.
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	if _, err := ForkFrom(empty, Options{Dir: dir, Cwd: cwd}); err == nil || !strings.Contains(err.Error(), empty) {
		t.Errorf("empty source: %v", err)
	}
	if _, err := ForkFrom(filepath.Join(dir, "missing.jsonl"), Options{Dir: dir, Cwd: cwd}); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("missing source: %v", err)
	}
}

func TestMostRecentForCwd(t *testing.T) {
	dir := t.TempDir()
	mk := func(cwd string, mtime time.Time) string {
		s, err := New(Options{Dir: dir, Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendMessage(&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent("hi"), Timestamp: 1}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		os.Chtimes(s.File(), mtime, mtime)
		return s.File()
	}
	now := time.Now()
	a := mk("/proj/a", now.Add(-2*time.Hour))
	b := mk("/proj/b", now.Add(-time.Hour))
	for _, c := range []struct{ filter, want string }{{"", b}, {"/proj/a", a}, {"/proj/b", b}, {"/proj/c", ""}} {
		if got, err := MostRecentFor(dir, c.filter); err != nil || got != c.want {
			t.Errorf("MostRecentFor(%q) = %q, %v; want %q", c.filter, got, err, c.want)
		}
	}
}
