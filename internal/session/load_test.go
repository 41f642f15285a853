package session

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
)

// refScanString is the plain byte-by-byte definition scanString must
// match: the end of the string starting at b[i] == '"' (-1 when invalid)
// and whether it is ASCII without escapes.
func refScanString(b []byte, i int) (int, bool) {
	plain := true
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, plain
		case c < 0x20:
			return -1, false
		case c >= 0x80:
			plain = false
		case c == '\\':
			plain = false
			n := escapeLen(b, i)
			if n < 0 {
				return -1, false
			}
			i += n - 1
		}
	}
	return -1, false
}

func TestScanStringMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "b", "z", " ", "é", "\u2028", "😀", "\"", "\\", "\\n", "\\\"", "\\\\", "\\u00e9", "\\u12", "\\x", "\n", "\t", "\x01", "\x7f", "\xff", "0123456789abcdef"}
	check := func(s []byte) {
		t.Helper()
		for _, start := range []int{0, 1} {
			if start >= len(s) || s[start] != '"' {
				continue
			}
			ge, gp := scanString(s, start)
			we, wp := refScanString(s, start)
			if ge != we || (we >= 0 && gp != wp) {
				t.Fatalf("scanString(%q, %d) = %d, %v; want %d, %v", s, start, ge, gp, we, wp)
			}
		}
	}
	for n := 0; n < 200000; n++ {
		var b strings.Builder
		b.WriteByte('"')
		k := r.IntN(40)
		if r.IntN(10) == 0 {
			k = r.IntN(400)
		}
		for j := 0; j < k; j++ {
			if r.IntN(4) == 0 {
				b.WriteString(pieces[r.IntN(len(pieces))])
			} else {
				b.WriteByte(byte('a' + r.IntN(26)))
			}
		}
		if r.IntN(8) != 0 {
			b.WriteByte('"')
		}
		if r.IntN(2) == 0 {
			b.WriteString(`,"k":1}`)
		}
		check([]byte(b.String()))
	}
}

func TestFastFloatMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vals := []string{"0", "-0", "0.0", "-0.0", "1", "0.1", "0.3", "0.0046", "123456789012345", "1234567890123456", "0.000000000000001", "9007199254740993", "1e5", "1.5E-3", "-2.25", "17976931348623157e292", "4.9e-324", "0.30000000000000004", "100.000000000000"}
	for i := 0; i < 100000; i++ {
		digits := strconv.FormatUint(r.Uint64()>>uint(r.IntN(64)), 10)
		if p := r.IntN(len(digits) + 1); p < len(digits) {
			digits = digits[:p] + "." + digits[p:]
			if p == 0 {
				digits = "0" + digits
			}
		}
		if r.IntN(2) == 0 {
			digits = "-" + digits
		}
		vals = append(vals, digits, strconv.FormatFloat(r.Float64()*math.Pow(10, float64(r.IntN(20)-10)), 'f', -1, 64))
	}
	for _, v := range vals {
		want, werr := strconv.ParseFloat(v, 64)
		got, ok := fastFloat([]byte(v))
		if ok != (werr == nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("fastFloat(%s) = %v, %v; want %v, %v", v, got, ok, want, werr)
		}
	}
}

// bigMixedSession is a file of more than one parse chunk with everything a
// load has to get right across chunk boundaries: blank and malformed
// lines, labels, a duplicate id, orphans, custom and unknown entries and a
// torn last line.
func bigMixedSession() []byte {
	data := genSession(4000, 9, "/home/u/proj")
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	var b bytes.Buffer
	for i, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
		if i == 0 {
			continue
		}
		id := fmt.Sprintf("%08x", i)
		switch i % 397 {
		case 5:
			b.WriteString("\n   \n")
		case 17:
			b.WriteString(`{"type":"message","id":"broken"` + "\n")
		case 40:
			fmt.Fprintf(&b, `{"type":"label","id":"l%s","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"%s","label":"L%d"}`+"\n", id, idOf(lines[i]), i)
		case 41:
			fmt.Fprintf(&b, `{"type":"custom","customType":"x","data":{"n":%d},"id":"c%s","parentId":%q,"timestamp":"2026-01-01T00:00:01.000Z"}`+"\n", i, id, idOf(lines[i]))
		case 42:
			fmt.Fprintf(&b, `{"type":"future_thing","id":"f%s","parentId":"missing","timestamp":"2026-01-01T00:00:02.000Z","z":[1,2,{"a":"\u00e9"}]}`+"\n", id)
		case 43:
			// the same id again: the later entry wins the id index
			fmt.Fprintf(&b, `{"type":"session_info","id":%q,"parentId":null,"timestamp":"2026-01-01T00:00:03.000Z","name":" n%d "}`+"\n", idOf(lines[i-3]), i)
		case 44:
			fmt.Fprintf(&b, `{"type":"message","id":"m%s","parentId":%q,"timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"x","timestamp":1.5e3,"Extra":true}}`+"\n", id, idOf(lines[i]))
		}
	}
	b.WriteString(`{"type":"message","id":"torn","par`)
	return b.Bytes()
}

func idOf(line []byte) string {
	ms, _ := members(nil, line)
	for _, m := range ms {
		if m.key == "id" {
			s, _ := str(m.val)
			return s
		}
	}
	return ""
}

// TestParallelLoadMatchesSequential checks a load of a multi-chunk file
// against a plain line-by-line parse of it.
func TestParallelLoadMatchesSequential(t *testing.T) {
	data := bigMixedSession()
	if len(data) < 4*minChunk {
		t.Fatalf("file of %d bytes is too small to be cut into chunks", len(data))
	}
	p := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, rep, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}

	// The reference: every line on its own, as the first version did.
	lines := bytes.Split(data, []byte("\n"))
	var want []*Entry
	skipped := 0
	for _, l := range lines[1:] {
		if len(bytes.TrimSpace(l)) == 0 || !validJSON(l) {
			skipped++
			continue
		}
		ms, _ := members(nil, l)
		e := &Entry{}
		parseEntry(e, l, ms)
		if e.Type == TypeMessage {
			m, _ := ai.DecodeMessage(messageRaw(l))
			e.setMessage(m, nil)
		}
		want = append(want, e)
	}
	if rep.Skipped != skipped || !rep.TornTail {
		t.Errorf("report %+v, want %d skipped and a torn tail", rep, skipped)
	}
	got := s.Entries()
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if g, w := viewOf(got[i]), viewOf(want[i]); !reflect.DeepEqual(g, w) {
			t.Fatalf("entry %d:\n got %#v\nwant %#v", i, g, w)
		}
	}
	if !bytes.Equal(s.Bytes(), validLines(data)) {
		t.Error("Bytes() differs from the valid lines of the file")
	}

	// Indexes: the later of two equal ids wins, labels and name as appended.
	byID := map[string]*Entry{}
	for _, e := range got {
		byID[e.ID] = e
	}
	for id, e := range byID {
		if s.Entry(id) != e {
			t.Fatalf("Entry(%s) is not the last entry with that id", id)
		}
	}
	if s.LeafID() != want[len(want)-1].ID {
		t.Errorf("leaf %s", s.LeafID())
	}
	if len(s.Labels()) == 0 || s.Name() == "" {
		t.Errorf("labels %v name %q", s.Labels(), s.Name())
	}

	// The context is the one the reference entries give.
	ref := newEmpty()
	for _, e := range want {
		ref.index(e)
	}
	if g, w := s.BuildContext(), ref.BuildContext(); !reflect.DeepEqual(g, w) {
		t.Errorf("context differs: %d vs %d messages", len(g.Messages), len(w.Messages))
	}
}

func TestIDIndexMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var x idIndex
	m := map[string]int{}
	var entries []*Entry
	for i := 0; i < 50000; i++ {
		var id string
		switch r.IntN(6) {
		case 0:
			if len(entries) > 0 {
				id = entries[r.IntN(len(entries))].ID // again: replaced
			}
		case 1:
			id = fmt.Sprintf("%x", r.Uint64()) // not 8 long
		default:
			id = fmt.Sprintf("%08x", r.Uint32()&0xfff0ff0f)
		}
		if id == "" {
			continue
		}
		entries = append(entries, &Entry{ID: id})
		_, had := m[id]
		if x.set(entries, id, len(entries)-1) != had {
			t.Fatalf("set(%s) replaced = %v", id, !had)
		}
		m[id] = len(entries) - 1
		probe := fmt.Sprintf("%08x", r.Uint32())
		want, ok := m[probe]
		if !ok {
			want = -1
		}
		if got := x.find(entries, probe); got != want {
			t.Fatalf("find(%s) = %d, want %d", probe, got, want)
		}
	}
	if x.n != len(m) {
		t.Fatalf("%d ids, want %d", x.n, len(m))
	}
	for id, p := range m {
		if got := x.find(entries, id); got != p {
			t.Fatalf("find(%s) = %d, want %d", id, got, p)
		}
	}
	var empty idIndex
	if x.find(entries, "") != -1 || empty.find(nil, "a") != -1 {
		t.Fatal("empty lookups")
	}
}

// Info must agree with BuildContext at every leaf of every fixture.
func TestInfoMatchesBuildContext(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	checked := 0
	for _, f := range files {
		s, _, err := Open(copyFixture(t, filepath.Base(f)))
		if err != nil {
			continue // fixtures of bad files
		}
		for _, e := range append(s.Entries(), nil) {
			s.mu.Lock()
			leaf := e
			if e == nil {
				leaf = s.leaf
			}
			ctx := s.contextLocked(leaf)
			info := s.infoLocked(leaf)
			s.mu.Unlock()
			want := ContextInfo{MessageCount: len(ctx.Messages), ThinkingLevel: ctx.ThinkingLevel, Provider: ctx.Provider, ModelID: ctx.ModelID}
			if info != want {
				t.Errorf("%s at %v: Info %+v, BuildContext gives %+v", f, leaf, info, want)
			}
			checked++
		}
	}
	t.Logf("%d leaves checked", checked)
}

// entryView is what an entry shows through its exported fields and
// methods (its message decoded), for comparisons.
type entryView struct {
	Type, ID  string
	ParentID  *string
	Timestamp string
	Fields    Fields
	Extra     jsonx.Extra
	Raw       []byte
	Message   ai.Message
	Role      string
}

func viewOf(e *Entry) entryView {
	return entryView{e.Type, e.ID, e.ParentID, e.Timestamp, *e.Fields, e.Extra, e.Raw, e.Message(), e.Role()}
}
