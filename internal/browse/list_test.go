package browse

import (
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/session"
)

func listFixture() []session.Info {
	at := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	return []session.Info{
		{Path: "/s/a.jsonl", ID: "a", Cwd: "/p", Created: at("2026-01-01T00:00:00.000Z"), Modified: at("2026-01-02T00:00:00.000Z"), MessageCount: 2, FirstMessage: "Fix the Parser", AllMessagesText: "Fix the Parser done"},
		{Path: "/s/b.jsonl", ID: "b", Cwd: "/p", Name: "Release notes", ParentSessionPath: "/s/a.jsonl", Created: at("2026-01-03T00:00:00.000Z"), Modified: at("2026-01-05T10:20:30.456Z"), MessageCount: 4, FirstMessage: "write notes", AllMessagesText: "write notes ok"},
		{Path: "/s/c.jsonl", ID: "c", Cwd: "", Created: time.Time{}, Modified: at("2026-01-04T00:00:00.000Z"), MessageCount: 0, FirstMessage: "(no messages)", AllMessagesText: ""},
		{Path: "/s/d.jsonl", ID: "d", Cwd: "/q", Created: at("2026-01-01T00:00:00Z"), Modified: at("2026-01-03T00:00:00Z"), MessageCount: 6, FirstMessage: "ÉCOLE question", AllMessagesText: "ÉCOLE question parser answer"},
	}
}

func listIDs(r ListResult) string {
	s := ""
	for i, it := range r.Sessions {
		if i > 0 {
			s += ","
		}
		s += it.ID
	}
	return s
}

func TestListSessionsOrderAndShape(t *testing.T) {
	r := ListSessions(listFixture(), ListQuery{})
	if got := listIDs(r); got != "b,c,d,a" || r.Total != 4 {
		t.Errorf("order %s total %d", got, r.Total)
	}
	want := `{"sessions":[` +
		`{"path":"/s/b.jsonl","id":"b","cwd":"/p","name":"Release notes","parentSessionPath":"/s/a.jsonl","created":"2026-01-03T00:00:00.000Z","modified":"2026-01-05T10:20:30.456Z","messageCount":4,"firstMessage":"write notes","allMessagesText":"write notes ok"},` +
		`{"path":"/s/c.jsonl","id":"c","cwd":"","created":"1970-01-01T00:00:00.000Z","modified":"2026-01-04T00:00:00.000Z","messageCount":0,"firstMessage":"(no messages)","allMessagesText":""},` +
		`{"path":"/s/d.jsonl","id":"d","cwd":"/q","created":"2026-01-01T00:00:00.000Z","modified":"2026-01-03T00:00:00.000Z","messageCount":6,"firstMessage":"ÉCOLE question","allMessagesText":"ÉCOLE question parser answer"},` +
		`{"path":"/s/a.jsonl","id":"a","cwd":"/p","created":"2026-01-01T00:00:00.000Z","modified":"2026-01-02T00:00:00.000Z","messageCount":2,"firstMessage":"Fix the Parser","allMessagesText":"Fix the Parser done"}` +
		`],"total":4}`
	if got := string(jsonx.MustMarshal(r)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestListSessionsQueryAndPaging(t *testing.T) {
	no := false
	cases := []struct {
		q     ListQuery
		ids   string
		total int
	}{
		{ListQuery{Query: "PARSER"}, "d,a", 2},     // firstMessage / allMessagesText, any case
		{ListQuery{Query: "release"}, "b", 1},      // name
		{ListQuery{Query: "école"}, "d", 1},        // non-ASCII case folding
		{ListQuery{Query: "nothing here"}, "", 0},  //
		{ListQuery{Limit: 2}, "b,c", 4},            // total before paging
		{ListQuery{Offset: 1, Limit: 2}, "c,d", 4}, //
		{ListQuery{Offset: 3, Limit: 10}, "a", 4},  //
		{ListQuery{Offset: 9}, "", 4},              //
		{ListQuery{Offset: -3, Limit: -1}, "b,c,d,a", 4},
		{ListQuery{Query: "e", Offset: 1, Limit: 1, IncludeText: &no}, "c", 4},
	}
	for _, c := range cases {
		r := ListSessions(listFixture(), c.q)
		if got := listIDs(r); got != c.ids || r.Total != c.total {
			t.Errorf("%+v: got %s (total %d), want %s (total %d)", c.q, got, r.Total, c.ids, c.total)
		}
	}
	r := ListSessions(listFixture(), ListQuery{IncludeText: &no, Limit: 1})
	if got := string(jsonx.MustMarshal(r)); got != `{"sessions":[{"path":"/s/b.jsonl","id":"b","cwd":"/p","name":"Release notes","parentSessionPath":"/s/a.jsonl","created":"2026-01-03T00:00:00.000Z","modified":"2026-01-05T10:20:30.456Z","messageCount":4,"firstMessage":"write notes"}],"total":4}` {
		t.Errorf("includeText false: %s", got)
	}
	if got := string(jsonx.MustMarshal(ListSessions(nil, ListQuery{}))); got != `{"sessions":[],"total":0}` {
		t.Errorf("empty: %s", got)
	}
}

func TestISOTime(t *testing.T) {
	cases := map[time.Time]string{
		{}: "1970-01-01T00:00:00.000Z",
		time.Date(2026, 3, 15, 22, 40, 18, 123456789, time.FixedZone("x", 3600)): "2026-03-15T21:40:18.123Z",
		time.Date(12345, 1, 2, 3, 4, 5, 0, time.UTC):                             "+012345-01-02T03:04:05.000Z",
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC):                                "-000001-01-01T00:00:00.000Z",
		time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC):                            "1970-01-01T00:00:00.000Z", // beyond JS dates
	}
	for in, want := range cases {
		if got := ISOTime(in); got != want {
			t.Errorf("ISOTime(%v) = %s, want %s", in, got, want)
		}
	}
}
