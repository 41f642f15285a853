package browse

import (
	"testing"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// The hand-written list encoder writes what the reflective one writes.
func TestListResultMarshalMatchesReflective(t *testing.T) {
	text := "all <the> text & \u2028 \"quoted\"\n\ttabs"
	r := ListResult{Total: 3, Sessions: []SessionItem{
		{Path: "/a/b.jsonl", ID: "id1", Cwd: "/a", Name: "named", ParentSessionPath: "/p.jsonl", Created: "2026-01-01T00:00:00.000Z", Modified: "2026-01-02T00:00:00.000Z", MessageCount: 4, FirstMessage: "first \x01", AllMessagesText: &text},
		{Path: "/c.jsonl", ID: "id2", Created: "c", Modified: "m", FirstMessage: "(no messages)"},
	}}
	type plain ListResult
	want, err := jsonx.Marshal(plain(r))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := r.MarshalJSON()
	if string(got) != string(want) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	empty, _ := ListResult{}.MarshalJSON()
	if string(empty) != `{"sessions":[],"total":0}` {
		t.Fatalf("empty: %s", empty)
	}
}
