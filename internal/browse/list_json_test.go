package browse

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/session"
)

// listQueries covers filtering, paging and includeText.
func listQueries() []ListQuery {
	no, yes := false, true
	return []ListQuery{
		{},
		{IncludeText: &no},
		{IncludeText: &yes},
		{Query: "PARSER"},
		{Query: "parser", IncludeText: &no},
		{Query: "release"},
		{Query: "école"},
		{Query: "nothing here"},
		{Query: "e", Offset: 1, Limit: 1, IncludeText: &no},
		{Limit: 2},
		{Offset: 1, Limit: 2},
		{Offset: 3, Limit: 10},
		{Offset: 9},
		{Offset: -3, Limit: -1},
		{Query: "quoted"},
		{Query: "\u2028"},
	}
}

// checkListJSON checks that ListSessionsJSON writes, in each of its three
// ways, the bytes of ListSessions(infos, q).MarshalJSON() (itself checked
// against the reflective encoder in list_marshal_test.go).
func checkListJSON(t *testing.T, infos []session.Info, q ListQuery) {
	t.Helper()
	b, _ := ListSessions(infos, q).MarshalJSON()
	want := string(b)
	l := ListSessionsJSON(infos, q)
	got, err := l.MarshalJSON()
	if err != nil || string(got) != want {
		t.Fatalf("%+v: MarshalJSON\ngot  %s\nwant %s", q, got, want)
	}
	if l.Len() != len(want) {
		t.Fatalf("%+v: Len %d, want %d", q, l.Len(), len(want))
	}
	var buf bytes.Buffer
	if n, err := l.WriteTo(&buf); err != nil || n != int64(len(want)) || buf.String() != want {
		t.Fatalf("%+v: WriteTo (%d, %v)\ngot  %s\nwant %s", q, n, err, buf.String(), want)
	}
	buf.Reset()
	bw := bufio.NewWriterSize(&buf, 16)
	if _, err := l.WriteTo(bw); err != nil || bw.Flush() != nil || buf.String() != want {
		t.Fatalf("%+v: WriteTo a bufio.Writer\ngot  %s\nwant %s", q, buf.String(), want)
	}
}

func TestListSessionsJSONMatchesListSessions(t *testing.T) {
	fx := listFixture()
	fx[0].AllMessagesText = "all <the> text & \u2028 \"quoted\"\n\ttabs \x01 \xed\xa0\x80 \xff"
	fx[2].Name = "name with \"quotes\""
	for _, q := range listQueries() {
		checkListJSON(t, fx, q) // no Memo: encoded on each call
	}
	// Out of order (as scope "all" may give them), with equal times.
	un := listFixture()
	un[1].Modified = un[3].Modified
	un[0], un[2] = un[2], un[0]
	for _, q := range listQueries() {
		checkListJSON(t, un, q)
	}
	checkListJSON(t, nil, ListQuery{})
}

// writeSession writes a session file whose user messages are texts.
func writeSession(t *testing.T, path, id string, at time.Time, texts ...string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"session","version":3,"id":%q,"timestamp":%q,"cwd":"/p"}`+"\n", id, at.UTC().Format(time.RFC3339Nano))
	parent := "null"
	for i, s := range texts {
		eid := fmt.Sprintf("%s%04d", id, i)
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"user","content":[{"type":"text","text":%s}],"timestamp":%d}}`+"\n",
			eid, parent, at.UTC().Format(time.RFC3339Nano), jsonx.MustMarshal(s), at.UnixMilli()+int64(i))
		parent = fmt.Sprintf("%q", eid)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The encoded items kept with the listing cache: a repeated listing gives
// the same bytes as a fresh encoding, and a session file that changes is
// listed as it is now, never as it was.
func TestListSessionsJSONCachedItems(t *testing.T) {
	session.ClearListCache()
	t.Cleanup(session.ClearListCache)
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	paths := make([]string, 5)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		writeSession(t, paths[i], fmt.Sprintf("id%d", i), t0.Add(time.Duration(i)*time.Hour), fmt.Sprintf("Fix the Parser %d", i), "école \"quoted\"\n done")
	}
	list := func() []session.Info {
		t.Helper()
		infos, err := session.List(dir, "")
		if err != nil || len(infos) != len(paths) {
			t.Fatalf("List: %d infos, %v", len(infos), err)
		}
		return infos
	}
	check := func(infos []session.Info) {
		t.Helper()
		for _, q := range listQueries() {
			checkListJSON(t, infos, q)
		}
	}
	first := list()
	check(first) // encodes and memoises
	for _, in := range first {
		if _, ok := in.Memo.Load().(*encodedItem); !ok {
			t.Fatalf("%s: no encoded item kept", in.Path)
		}
	}
	again := list()
	for i := range again {
		if again[i].Memo != first[i].Memo {
			t.Fatalf("%s: unchanged file, new memo", again[i].Path)
		}
	}
	check(again) // from the memoised items

	// One file changes (size and mtime), one only its mtime.
	writeSession(t, paths[1], "id1", t0.Add(9*time.Hour), "Renamed PARSER work", "second")
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(paths[3], future, future); err != nil {
		t.Fatal(err)
	}
	changed := list()
	byPath := map[string]session.Info{}
	for _, in := range first {
		byPath[in.Path] = in
	}
	for _, in := range changed {
		old := byPath[in.Path]
		fresh := in.Path == paths[1] || in.Path == paths[3]
		if fresh == (in.Memo == old.Memo) {
			t.Fatalf("%s: memo reused %v, file changed %v", in.Path, in.Memo == old.Memo, fresh)
		}
	}
	if changed[0].Path != paths[1] || changed[0].FirstMessage != "Renamed PARSER work" {
		t.Fatalf("changed file listed as %+v", changed[0])
	}
	check(changed)
	got, _ := ListSessionsJSON(changed, ListQuery{Query: "renamed"}).MarshalJSON()
	if !strings.Contains(string(got), `"allMessagesText":"Renamed PARSER work second"`) || !strings.HasSuffix(string(got), `"total":1}`) {
		t.Fatalf("query on the changed file: %s", got)
	}
	got, _ = ListSessionsJSON(changed, ListQuery{}).MarshalJSON()
	if strings.Contains(string(got), "Fix the Parser 1") {
		t.Fatalf("stale text of the changed file: %s", got)
	}

	// ClearListCache drops every memo.
	session.ClearListCache()
	for _, in := range list() {
		if in.Memo.Load() != nil {
			t.Fatalf("%s: memo survived ClearListCache", in.Path)
		}
	}
}

// Listings running at the same time share the memos safely (-race).
func TestListSessionsJSONConcurrent(t *testing.T) {
	session.ClearListCache()
	t.Cleanup(session.ClearListCache)
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 300 {
		writeSession(t, filepath.Join(dir, fmt.Sprintf("s%03d.jsonl", i)), fmt.Sprintf("id%d", i), t0.Add(time.Duration(i)*time.Minute), "text", fmt.Sprint(i))
	}
	infos, _ := session.List(dir, "")
	want, _ := ListSessions(infos, ListQuery{}).MarshalJSON()
	done := make(chan string)
	for range 4 {
		go func() {
			infos, _ := session.List(dir, "")
			b, _ := ListSessionsJSON(infos, ListQuery{}).MarshalJSON()
			done <- string(b)
		}()
	}
	for range 4 {
		if got := <-done; got != string(want) {
			t.Fatalf("concurrent listing differs")
		}
	}
}

// Answers of several chunks, and an item larger than a chunk.
func TestListJSONWriteToChunks(t *testing.T) {
	big := strings.Repeat("word ", 300000) // 1.5 MB
	var infos []session.Info
	for i := range 3000 {
		text := strings.Repeat(fmt.Sprintf("t%d ", i), 100)
		if i == 1500 {
			text = big
		}
		infos = append(infos, session.Info{Path: fmt.Sprintf("/s/%04d.jsonl", i), ID: fmt.Sprint(i), Modified: time.Unix(int64(10000-i), 0), FirstMessage: "f", AllMessagesText: text, Memo: new(session.Memo)})
	}
	no := false
	for _, q := range []ListQuery{{}, {IncludeText: &no}, {Offset: 1499, Limit: 3}} {
		checkListJSON(t, infos, q) // encodes
		checkListJSON(t, infos, q) // from the memos
	}
}

// SizeHint is near the length of the answer (the RPC writer grows its pipe
// for answers over 256 KiB by it).
func TestListJSONSizeHint(t *testing.T) {
	var infos []session.Info
	for i := range 500 {
		infos = append(infos, session.Info{Path: fmt.Sprintf("/s/%04d.jsonl", i), ID: fmt.Sprint(i), Modified: time.Unix(int64(i), 0), FirstMessage: "f", AllMessagesText: strings.Repeat("w ", 500)})
	}
	no := false
	for _, q := range []ListQuery{{}, {IncludeText: &no}, {Limit: 1}} {
		l := ListSessionsJSON(infos, q)
		if h, n := l.SizeHint(), l.Len(); h < n/2 || h > 2*n {
			t.Errorf("%+v: hint %d for %d bytes", q, h, n)
		}
	}
}

// appendText writes what appendString writes, whatever the bytes.
func TestAppendTextMatchesAppendString(t *testing.T) {
	base := strings.Repeat("plain words and more plain words ", 3)
	specials := []string{"", "\"", "\\", "\x00", "\x1f", "\x7f", "\x80", "é", "\u2028", "\xed\xa0\x80", "\xff", " ", "~"}
	check := func(s string) {
		t.Helper()
		if got, want := string(appendText(nil, s)), string(appendString(nil, s)); got != want {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	}
	for _, sp := range specials {
		for pos := 0; pos <= len(base); pos += 7 {
			check(base[:pos] + sp + base[pos:])
		}
		check(sp)
	}
	for c := 0; c < 256; c++ {
		for n := 1; n <= 40; n++ {
			check(strings.Repeat("a", n-1) + string([]byte{byte(c)}))
		}
	}
}
