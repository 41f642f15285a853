package browse

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// openLines writes a session file (a header, then lines) and opens it.
func openLines(t testing.TB, lines ...string) *session.Session {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"sess-t","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/proj"}` + "\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func fixture(t *testing.T) *session.Session {
	t.Helper()
	s, _, err := session.Open("testdata/tree.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func marshal(t testing.TB, v json.Marshaler) string {
	t.Helper()
	b, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if testenv.Update(t, *update) { // then compared like any other
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != strings.TrimSuffix(string(want), "\n") {
		t.Errorf("%s differs:\n got: %s\nwant: %s", name, got, want)
	}
}

// The fixture covers every entry type: a model and a thinking change, a
// user string and a user with blocks (image between texts) on a second
// branch, an assistant with thinking, text and a read call, its result,
// label / session_info / custom entries (hidden in the browse view), an
// aborted assistant with no content, a compaction, a branch summary, a
// custom message, a bash execution, an unknown entry type, and a label as
// the last entry (the leaf).
func TestSessionTreeGolden(t *testing.T) {
	s := fixture(t)
	for _, c := range []struct {
		file string
		opts TreeOptions
	}{
		{"tree.plain.json", TreeOptions{}},
		{"tree.plain-flat.json", TreeOptions{Flat: true}},
		{"tree.browse.json", TreeOptions{View: ViewBrowse, Home: "/home/u"}},
		{"tree.browse-flat.json", TreeOptions{View: ViewBrowse, Flat: true, Home: "/home/u"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			res := SessionTree(s, c.opts)
			golden(t, c.file, marshal(t, res))
			if res.IsFlat() != c.opts.Flat {
				t.Errorf("IsFlat = %v", res.IsFlat())
			}
		})
	}
}

func TestRawTreeGolden(t *testing.T) {
	s := fixture(t)
	golden(t, "rawtree.json", marshal(t, RawTree(s, false)))
	golden(t, "rawtree-flat.json", marshal(t, RawTree(s, true)))
}

// The raw nested form is exactly the JSON of the session's own tree nodes
// ({entry, children, label?, labelTimestamp?}) as a recursive encoder
// would write it.
func TestRawTreeMatchesRecursiveEncoding(t *testing.T) {
	s := fixture(t)
	type node struct {
		Entry          json.RawMessage `json:"entry"`
		Children       []*node         `json:"children"`
		Label          string          `json:"label,omitempty"`
		LabelTimestamp string          `json:"labelTimestamp,omitempty"`
	}
	var conv func(ns []*session.TreeNode) []*node
	conv = func(ns []*session.TreeNode) []*node {
		out := []*node{}
		for _, n := range ns {
			out = append(out, &node{Entry: n.Entry.Raw, Children: conv(n.Children), Label: n.Label, LabelTimestamp: n.LabelTimestamp})
		}
		return out
	}
	want := jsonx.MustMarshal(struct {
		Tree   []*node `json:"tree"`
		LeafID *string `json:"leafId"`
	}{conv(s.Tree()), leafPtr(s.LeafID())})
	if got := marshal(t, RawTree(s, false)); got != string(want) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// Every entry the package writes by hand is what jsonx.Marshal writes for
// the struct, and the flat form decodes into FlatNodes.
func TestEntryJSONMatchesStructTags(t *testing.T) {
	s := fixture(t)
	for _, view := range []string{ViewDefault, ViewBrowse} {
		res := SessionTree(s, TreeOptions{View: view, Flat: true, Home: "/home/u"})
		for _, n := range res.Flat {
			want := jsonx.MustMarshal(n.Entry)
			got := appendEntry(nil, n.Entry)
			if !bytes.Equal(got, want) {
				t.Errorf("view %q entry %s:\n got %s\nwant %s", view, n.Entry.ID, got, want)
			}
		}
		var back struct {
			LeafID *string    `json:"leafId"`
			Nodes  []FlatNode `json:"nodes"`
		}
		if err := json.Unmarshal([]byte(marshal(t, res)), &back); err != nil {
			t.Fatal(err)
		}
		if len(back.Nodes) != len(res.Flat) {
			t.Errorf("decoded %d nodes, want %d", len(back.Nodes), len(res.Flat))
		}
	}
}

// Nested and flat forms hold the same nodes, the flat one in depth-first
// order, with the same parent ids.
func TestFlatIsDepthFirstOfNested(t *testing.T) {
	s := fixture(t)
	for _, view := range []string{ViewDefault, ViewBrowse} {
		nested := SessionTree(s, TreeOptions{View: view, Home: "/h"})
		flat := SessionTree(s, TreeOptions{View: view, Flat: true, Home: "/h"})
		var order []string
		stack := append([]*TreeNode(nil), nested.Nodes...)
		for i, j := 0, len(stack)-1; i < j; i, j = i+1, j-1 {
			stack[i], stack[j] = stack[j], stack[i]
		}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			order = append(order, string(appendEntry(nil, n.Entry)))
			for i := len(n.Children) - 1; i >= 0; i-- {
				stack = append(stack, n.Children[i])
			}
		}
		if len(order) != len(flat.Flat) {
			t.Fatalf("view %q: %d nested nodes, %d flat", view, len(order), len(flat.Flat))
		}
		for i, n := range flat.Flat {
			if got := string(appendEntry(nil, n.Entry)); got != order[i] {
				t.Errorf("view %q node %d: flat %s, nested %s", view, i, got, order[i])
			}
		}
		if strings.Contains(marshal(t, flat), `"children"`) {
			t.Errorf("view %q: flat form has a children member", view)
		}
	}
}

func ids(nodes []*TreeNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Entry.ID)
	}
	return out
}

const (
	ts1 = `"timestamp":"2026-01-01T00:00:01.000Z"`
	ts2 = `"timestamp":"2026-01-01T00:00:02.000Z"`
	ts3 = `"timestamp":"2026-01-01T00:00:03.000Z"`
	ts4 = `"timestamp":"2026-01-01T00:00:04.000Z"`
	ts5 = `"timestamp":"2026-01-01T00:00:05.000Z"`
	ts6 = `"timestamp":"2026-01-01T00:00:06.000Z"`
)

func userLine(id, parent, ts, text string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return `{"type":"message","id":"` + id + `","parentId":` + p + `,` + ts + `,"message":{"role":"user","content":` + string(jsonx.MustMarshal(text)) + `,"timestamp":1}}`
}

func assistantLine(id, parent, ts, content string) string {
	return `{"type":"message","id":"` + id + `","parentId":"` + parent + `",` + ts + `,"message":{"role":"assistant","content":` + content + `,"api":"x","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1}}`
}

func resultLine(id, parent, ts, callID, name string) string {
	return `{"type":"message","id":"` + id + `","parentId":"` + parent + `",` + ts + `,"message":{"role":"toolResult","toolCallId":"` + callID + `","toolName":"` + name + `","content":[],"isError":false,"timestamp":1}}`
}

// A hidden root's children become roots; hidden entries in the middle of
// a chain hand their children to the nearest shown ancestor, keeping the
// children's order; the leaf on a hidden entry resolves upwards.
func TestBrowseReparenting(t *testing.T) {
	s := openLines(t,
		`{"type":"session_info","id":"si","parentId":null,`+ts1+`,"name":"n"}`,
		userLine("u1", "si", ts2, "one"),
		`{"type":"custom","customType":"c","id":"cu","parentId":"u1",`+ts3+`}`,
		userLine("u2", "cu", ts4, "two"),
		`{"type":"label","id":"lb","parentId":"u1",`+ts5+`,"targetId":"u1","label":"L"}`,
		userLine("u3", "lb", ts6, "three"),
		`{"type":"label","id":"lb2","parentId":"u3",`+ts6+`,"targetId":"u2"}`,
	)
	res := SessionTree(s, TreeOptions{View: ViewBrowse})
	want := `{"leafId":"u3","nodes":[` +
		`{"entry":{"id":"u1","parentId":null,"type":"message","timestamp":"2026-01-01T00:00:02.000Z","label":"L","preview":"one","role":"user"},"children":[` +
		`{"entry":{"id":"u2","parentId":"u1","type":"message","timestamp":"2026-01-01T00:00:04.000Z","preview":"two","role":"user"},"children":[]},` +
		`{"entry":{"id":"u3","parentId":"u1","type":"message","timestamp":"2026-01-01T00:00:06.000Z","preview":"three","role":"user"},"children":[]}]}]}`
	if got := marshal(t, res); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// The plain view keeps everything, with the stored parent ids.
	plain := SessionTree(s, TreeOptions{})
	if got := ids(plain.Nodes); len(got) != 1 || got[0] != "si" || *plain.LeafID != "lb2" {
		t.Errorf("plain roots %v leaf %v", got, *plain.LeafID)
	}
}

func TestBrowseLeafResolution(t *testing.T) {
	// Only hidden entries: no visible ancestor.
	s := openLines(t,
		`{"type":"session_info","id":"si","parentId":null,`+ts1+`,"name":"n"}`,
		`{"type":"label","id":"lb","parentId":"si",`+ts2+`,"targetId":"si","label":"x"}`,
	)
	if got := marshal(t, SessionTree(s, TreeOptions{View: ViewBrowse})); got != `{"leafId":null,"nodes":[]}` {
		t.Errorf("got %s", got)
	}
	if got := marshal(t, SessionTree(s, TreeOptions{View: ViewBrowse, Flat: true})); got != `{"leafId":null,"nodes":[]}` {
		t.Errorf("flat: got %s", got)
	}
	// A chain of hidden entries below a visible one.
	s = openLines(t,
		userLine("u1", "", ts1, "hi"),
		`{"type":"custom","customType":"c","id":"cu","parentId":"u1",`+ts2+`}`,
		`{"type":"session_info","id":"si","parentId":"cu",`+ts3+`,"name":"n"}`,
		`{"type":"label","id":"lb","parentId":"si",`+ts4+`,"targetId":"u1","label":"x"}`,
	)
	if got := SessionTree(s, TreeOptions{View: ViewBrowse}).LeafID; got == nil || *got != "u1" {
		t.Errorf("leaf %v, want u1", got)
	}
	// The leaf moved by navigation.
	if err := s.SetLeaf("si"); err != nil {
		t.Fatal(err)
	}
	if got := SessionTree(s, TreeOptions{View: ViewBrowse}).LeafID; got == nil || *got != "u1" {
		t.Errorf("leaf %v, want u1", got)
	}
	if got := SessionTree(s, TreeOptions{}).LeafID; got == nil || *got != "si" {
		t.Errorf("plain leaf %v, want si", got)
	}
	// An empty session.
	s = openLines(t)
	if got := marshal(t, SessionTree(s, TreeOptions{})); got != `{"leafId":null,"nodes":[]}` {
		t.Errorf("empty: got %s", got)
	}
	if got := marshal(t, RawTree(s, false)); got != `{"tree":[],"leafId":null}` {
		t.Errorf("empty raw: got %s", got)
	}
}

// The same tool call id on two branches resolves along each result's own
// branch; a call found on no ancestor falls back to the whole tree (the
// last one depth-first); an unknown call gives [toolName].
func TestToolResultResolution(t *testing.T) {
	s := openLines(t,
		userLine("u1", "", ts1, "go"),
		assistantLine("aA", "u1", ts2, `[{"type":"toolCall","id":"dup","name":"read","arguments":{"path":"/home/u/A"}}]`),
		resultLine("rA", "aA", ts3, "dup", "read"),
		assistantLine("aB", "u1", ts4, `[{"type":"toolCall","id":"dup","name":"write","arguments":{"path":"/home/u/B"}},{"type":"toolCall","id":"other","name":"ls","arguments":{}}]`),
		resultLine("rB", "aB", ts5, "dup", "write"),
		resultLine("rX", "u1", ts5, "other", "ls"),
		resultLine("rY", "u1", ts6, "missing", "grep"),
		resultLine("rZ", "u1", ts6, "dup", "read"),
		// A second call with the same id nearer on the branch wins.
		assistantLine("aC", "rA", ts6, `[{"type":"toolCall","id":"dup","name":"edit","arguments":{"file_path":"/home/u/C"}}]`),
		resultLine("rC", "aC", ts6, "dup", "edit"),
	)
	res := SessionTree(s, TreeOptions{View: ViewBrowse, Flat: true, Home: "/home/u"})
	got := map[string]string{}
	for _, n := range res.Flat {
		if n.Entry.Type == "tool_result" {
			got[n.Entry.ID] = string(appendEntry(nil, n.Entry))
		}
	}
	want := map[string]string{
		"rA": `{"id":"rA","parentId":"aA","type":"tool_result","timestamp":"2026-01-01T00:00:03.000Z","preview":"[read: ~/A]","toolName":"read","toolArgs":{"path":"/home/u/A"},"formattedToolCall":"[read: ~/A]"}`,
		"rB": `{"id":"rB","parentId":"aB","type":"tool_result","timestamp":"2026-01-01T00:00:05.000Z","preview":"[write: ~/B]","toolName":"write","toolArgs":{"path":"/home/u/B"},"formattedToolCall":"[write: ~/B]"}`,
		"rX": `{"id":"rX","parentId":"u1","type":"tool_result","timestamp":"2026-01-01T00:00:05.000Z","preview":"[ls: .]","toolName":"ls","toolArgs":{},"formattedToolCall":"[ls: .]"}`,
		"rY": `{"id":"rY","parentId":"u1","type":"tool_result","timestamp":"2026-01-01T00:00:06.000Z","preview":"[grep]","toolName":"grep"}`,
		// Depth-first, aB's call comes after aA's and aC's: it wins globally.
		"rZ": `{"id":"rZ","parentId":"u1","type":"tool_result","timestamp":"2026-01-01T00:00:06.000Z","preview":"[write: ~/B]","toolName":"write","toolArgs":{"path":"/home/u/B"},"formattedToolCall":"[write: ~/B]"}`,
		"rC": `{"id":"rC","parentId":"aC","type":"tool_result","timestamp":"2026-01-01T00:00:06.000Z","preview":"[edit: ~/C]","toolName":"edit","toolArgs":{"file_path":"/home/u/C"},"formattedToolCall":"[edit: ~/C]"}`,
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s:\n got %s\nwant %s", id, got[id], w)
		}
	}
}

func TestPlainPreviews(t *testing.T) {
	long := strings.Repeat("x", 139) + "😀tail"
	cases := []struct {
		line string
		want string // the preview member, "" = none
	}{
		{userLine("a", "", ts1, ""), `"preview":""`},
		{userLine("a", "", ts1, "  spaced\n"), `"preview":"  spaced\n"`},
		{userLine("a", "", ts1, long), `"preview":"` + strings.Repeat("x", 139) + `\ud83d"`},
		{`{"type":"message","id":"a","parentId":null,` + ts1 + `,"message":{"role":"user","content":[{"type":"image","data":"AA","mimeType":"image/png"}],"timestamp":1}}`, ""},
		{`{"type":"message","id":"a","parentId":null,` + ts1 + `,"message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":""},{"type":"text","text":"b"}],"timestamp":1}}`, `"preview":"a  b"`},
		{`{"type":"message","id":"a","parentId":null,` + ts1 + `,"message":{"role":"toolResult","toolCallId":"c","content":[],"isError":false,"timestamp":1}}`, `"preview":"[toolResult:undefined]"`},
		{`{"type":"message","id":"a","parentId":null,` + ts1 + `,"message":{"role":"custom","customType":"x","content":"hi","display":true,"timestamp":1}}`, ""},
		{`{"type":"label","id":"a","parentId":null,` + ts1 + `,"targetId":"zz"}`, `"preview":"[label:]"`},
		{`{"type":"session_info","id":"a","parentId":null,` + ts1 + `,"name":"N"}`, `"preview":"[session_info:N]"`},
		{`{"type":"custom","customType":"c","id":"a","parentId":null,` + ts1 + `}`, `"preview":"[custom]"`},
		{`{"type":"usage","id":"a","parentId":null,` + ts1 + `,"kind":"k","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}`, ""},
	}
	for _, c := range cases {
		s := openLines(t, c.line)
		res := SessionTree(s, TreeOptions{Flat: true})
		if len(res.Flat) != 1 {
			t.Fatalf("%s: %d nodes", c.line, len(res.Flat))
		}
		got := string(appendEntry(nil, res.Flat[0].Entry))
		i := strings.Index(got, `"preview":`)
		p := ""
		if i >= 0 {
			p = got[i : len(got)-1]
		}
		if p != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.line, p, c.want)
		}
	}
}

func TestBrowsePreviews(t *testing.T) {
	asst := func(content, stop, errMsg string) string {
		e := ""
		if errMsg != "" {
			e = `,"errorMessage":` + string(jsonx.MustMarshal(errMsg))
		}
		return `{"type":"message","id":"a","parentId":null,` + ts1 + `,"message":{"role":"assistant","content":` + content + `,"api":"x","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"` + stop + `"` + e + `,"timestamp":1}}`
	}
	cases := []struct {
		line string
		want string // the members after timestamp/label
	}{
		{userLine("a", "", ts1, "\t two\nlines \n"), `"preview":"two lines","role":"user"`},
		{userLine("a", "", ts1, strings.Repeat("ab", 150)), `"preview":"` + strings.Repeat("ab", 100) + `","role":"user"`},
		{asst(`[{"type":"text","text":"Done."},{"type":"text","text":"More"}]`, "stop", ""), `"preview":"Done. More","role":"assistant","stopReason":"stop"`},
		{asst(`[{"type":"text","text":"  "}]`, "stop", ""), `"preview":"","role":"assistant","stopReason":"stop"`},
		{asst(`[]`, "error", "Boom\nbad"), `"preview":"Boom bad","role":"assistant","stopReason":"error","errorMessage":"Boom\nbad"`},
		{asst(`[]`, "aborted", "cancelled"), `"preview":"(aborted)","role":"assistant","stopReason":"aborted","errorMessage":"cancelled"`},
		{asst(`[{"type":"thinking","thinking":"t"}]`, "stop", ""), `"preview":"(no content)","role":"assistant","stopReason":"stop"`},
		{`{"type":"message","id":"a","parentId":null,` + ts1 + `,"message":{"role":"bashExecution","command":"` + strings.Repeat("y", 60) + `","output":"","cancelled":false,"truncated":false,"timestamp":1}}`, `"preview":"[bash: ` + strings.Repeat("y", 50) + `...]","role":"bashExecution"`},
		{`{"type":"message","id":"a","parentId":null,` + ts1 + `,"message":{"role":"custom","customType":"x","content":[{"type":"text","text":"hi"}],"display":true,"timestamp":1}}`, `"preview":"hi","role":"custom"`},
		{`{"type":"message","id":"a","parentId":null,` + ts1 + `,"message":{"role":"weird","content":"some\ttext","timestamp":1}}`, `"preview":"some text","role":"unknown","rawRole":"weird"`},
		{`{"type":"message","id":"a","parentId":null,` + ts1 + `,"message":{"role":"toolResult","toolCallId":"","content":[],"isError":false,"timestamp":1}}`, `"preview":"[tool]"`},
		{`{"type":"custom_message","customType":"note","content":[{"type":"text","text":"a\nb"}],"display":false,"id":"a","parentId":null,` + ts1 + `}`, `"preview":"a b","customType":"note"`},
		{`{"type":"compaction","id":"a","parentId":null,` + ts1 + `,"summary":"s","firstKeptEntryId":"x","tokensBefore":0}`, `"tokensBefore":0`},
		{`{"type":"branch_summary","id":"a","parentId":null,` + ts1 + `,"fromId":"root","summary":""}`, `"summary":""`},
		{`{"type":"model_change","id":"a","parentId":null,` + ts1 + `,"provider":"p","modelId":"m"}`, `"provider":"p","modelId":"m"`},
		{`{"type":"thinking_level_change","id":"a","parentId":null,` + ts1 + `,"thinkingLevel":"off"}`, `"thinkingLevel":"off"`},
	}
	for _, c := range cases {
		s := openLines(t, c.line)
		res := SessionTree(s, TreeOptions{View: ViewBrowse, Flat: true, Home: "/home/u"})
		if len(res.Flat) != 1 {
			t.Fatalf("%s: %d nodes", c.line, len(res.Flat))
		}
		got := string(appendEntry(nil, res.Flat[0].Entry))
		_, rest, _ := strings.Cut(got, `"timestamp":"2026-01-01T00:00:01.000Z"`)
		rest = strings.TrimPrefix(strings.TrimSuffix(rest, "}"), ",")
		if rest != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.line, rest, c.want)
		}
	}
}

// Children are ordered by timestamp whatever the file order, as in pi.
func TestChildrenByTimestamp(t *testing.T) {
	s := openLines(t,
		userLine("r", "", ts1, "root"),
		userLine("late", "r", ts5, "late"),
		userLine("early", "r", ts2, "early"),
		userLine("same", "r", ts5, "same"),
	)
	for _, view := range []string{ViewDefault, ViewBrowse} {
		res := SessionTree(s, TreeOptions{View: view})
		got := strings.Join(ids(res.Nodes[0].Children), ",")
		if got != "early,late,same" {
			t.Errorf("view %q: children %s", view, got)
		}
	}
	var raw []string
	for _, n := range RawTreeFlat(s) {
		var e struct{ ID string }
		_ = json.Unmarshal(n.Entry, &e)
		raw = append(raw, e.ID)
	}
	if got := strings.Join(raw, ","); got != "r,early,late,same" {
		t.Errorf("raw flat order %s", got)
	}
}

// Orphans (missing parent) and self-parented entries are roots; in the
// flat raw form their parentId is null while the entry keeps its own.
func TestOrphansAreRoots(t *testing.T) {
	s := openLines(t,
		userLine("a", "", ts1, "a"),
		userLine("o", "gone", ts2, "orphan"),
		userLine("self", "self", ts3, "self"),
	)
	res := SessionTree(s, TreeOptions{})
	if got := strings.Join(ids(res.Nodes), ","); got != "a,o,self" {
		t.Errorf("roots %s", got)
	}
	if got := *res.Nodes[1].Entry.ParentID; got != "gone" {
		t.Errorf("plain parentId %q, want the stored one", got)
	}
	browse := SessionTree(s, TreeOptions{View: ViewBrowse})
	if browse.Nodes[1].Entry.ParentID != nil {
		t.Errorf("browse parentId %v, want null", *browse.Nodes[1].Entry.ParentID)
	}
	for _, n := range RawTreeFlat(s) {
		if n.ParentID != nil {
			t.Errorf("raw flat parent %s, want null", *n.ParentID)
		}
	}
}

// The package's own tree index agrees with session.Tree (pi's getTree),
// duplicate ids (the first entry owns the id), orphans, self-parents and
// timestamp ordering included.
func TestForestMatchesSessionTree(t *testing.T) {
	sessions := []*session.Session{
		fixture(t),
		openLines(t,
			userLine("a", "", ts1, "a"),
			userLine("b", "a", ts2, "b"),
			userLine("a", "b", ts3, "duplicate of a"),
			userLine("c", "a", ts4, "child of the first a"),
			userLine("d", "gone", ts5, "orphan"),
			userLine("e", "e", ts6, "self"),
			userLine("f", "a", ts1, "early child of a"),
		),
	}
	if n := sessions[1].Len(); n != 7 {
		t.Fatalf("the duplicate-id session loaded %d entries", n)
	}
	for k, s := range sessions {
		var want []string
		type item struct {
			n     *session.TreeNode
			depth int
		}
		var stack []item
		roots := s.Tree()
		for i := len(roots) - 1; i >= 0; i-- {
			stack = append(stack, item{roots[i], 0})
		}
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			want = append(want, strings.Repeat(" ", it.depth)+it.n.Entry.ID+"/"+it.n.Label)
			for i := len(it.n.Children) - 1; i >= 0; i-- {
				stack = append(stack, item{it.n.Children[i], it.depth + 1})
			}
		}
		f := newForest(s)
		var got []string
		type fitem struct {
			i     int32
			depth int
		}
		var fstack []fitem
		for i := len(f.roots) - 1; i >= 0; i-- {
			fstack = append(fstack, fitem{f.roots[i], 0})
		}
		for len(fstack) > 0 {
			it := fstack[len(fstack)-1]
			fstack = fstack[:len(fstack)-1]
			got = append(got, strings.Repeat(" ", it.depth)+f.entries[it.i].ID+"/"+f.labels[it.i])
			c := f.children(it.i)
			for i := len(c) - 1; i >= 0; i-- {
				fstack = append(fstack, fitem{c[i], it.depth + 1})
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("session %d:\n got\n%s\nwant\n%s", k, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
