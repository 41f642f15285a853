package jsonx

import (
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

var stringCases = []string{
	"", "plain", `q"uote\back`, "ctl\x00\x01\x1f\n\r\t\b\f", "é ü 😀 \u2028\u2029", "bad\xff\xfe\xed\xa0\x80x",
	"<tag>&amp;", strings.Repeat("a", 100) + "\xc3",
}

func FuzzStringLen(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := StringLen(s), len(AppendString(nil, s)); got != want {
			t.Fatalf("StringLen(%q) = %d, want %d", s, got, want)
		}
	})
}

// A StringReader yields what AppendString writes for the whole text, over
// chunk boundaries that fall inside multi-byte characters and escapes.
func TestStringReader(t *testing.T) {
	long := strings.Repeat("x", stringChunk-1) + "é" + strings.Repeat("\"😀\n", stringChunk/3) + "\xff" + strings.Repeat("y", 3*stringChunk)
	cases := append([][]string{{long}, {"data:image/png;base64,", long}, {}, {"", ""}}, func() (out [][]string) {
		for _, s := range stringCases {
			out = append(out, []string{s})
		}
		return
	}()...)
	for _, parts := range cases {
		whole := strings.Join(parts, "")
		want := string(AppendString(nil, whole))
		for _, bufSize := range []int{1, 7, 4096, 1 << 20} {
			r := NewStringReader(append([]string(nil), parts...)...)
			var sb strings.Builder
			buf := make([]byte, bufSize)
			for {
				n, err := r.Read(buf)
				sb.Write(buf[:n])
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if sb.String() != want {
				t.Fatalf("parts of %d bytes, reads of %d: got %d bytes, want %d", len(whole), bufSize, sb.Len(), len(want))
			}
		}
		if got := StringReaderLen(parts...); got != len(want) {
			t.Fatalf("StringReaderLen = %d, want %d", got, len(want))
		}
		if !utf8.ValidString(want) {
			t.Fatalf("invalid UTF-8 written")
		}
	}
}

// Reading a long text allocates one piece's buffer, not one per piece.
func TestStringReaderReusesItsBuffer(t *testing.T) {
	long := strings.Repeat("a\"b\n", 1<<20) // 4 MB, 128 pieces
	buf := make([]byte, 8<<10)
	allocs := testing.AllocsPerRun(3, func() {
		r := NewStringReader(long)
		for {
			if _, err := r.Read(buf); err != nil {
				break
			}
		}
	})
	if allocs > 10 {
		t.Fatalf("%.0f allocations to read a 4 MB text", allocs)
	}
}
