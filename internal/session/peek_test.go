package session

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// stringPrefix decodes a prefix of a verbatim string that ends on a
// character boundary and holds at least limit/6 - 4 UTF-16 code units.
func TestStringPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a", "\n", "\x01", "\"", "\\", "é", "日", "😀", "\u2028"}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := r.IntN(300); n > 0; n-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		full := b.String()
		tok := jsonx.AppendString(nil, full)
		limit := r.IntN(len(tok) + 10)
		got := stringPrefix(tok, 0, limit)
		if !strings.HasPrefix(full, got) {
			t.Fatalf("%q cut at %d: %q is not a prefix", full, limit, got)
		}
		if len(tok)-2 <= limit && got != full {
			t.Fatalf("%q cut at %d: %q, want all of it", full, limit, got)
		}
		if units := len(utf16.Encode([]rune(got))); got != full && units < limit/6-4 {
			t.Fatalf("%q cut at %d: %q holds %d units", full, limit, got, units)
		}
	}
}
