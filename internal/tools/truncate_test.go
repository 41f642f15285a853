package tools

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFormatSize(t *testing.T) {
	cases := map[int]string{0: "0B", 1023: "1023B", 1024: "1.0KB", 51200: "50.0KB", 1536: "1.5KB", 1024 * 1024: "1.0MB", 1572864: "1.5MB"}
	for n, want := range cases {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTruncateHead(t *testing.T) {
	tr := TruncateHead("a\nb\nc", 0, 0)
	if tr.Truncated || tr.Content != "a\nb\nc" || tr.TotalLines != 3 {
		t.Fatalf("unexpected %+v", tr)
	}
	tr = TruncateHead("1\n2\n3\n4\n5", 3, 100)
	if !tr.Truncated || tr.TruncatedBy != "lines" || tr.Content != "1\n2\n3" || tr.OutputLines != 3 || tr.TotalLines != 5 {
		t.Fatalf("lines: %+v", tr)
	}
	tr = TruncateHead("aaaa\nbbbb\ncccc", 100, 10)
	if tr.TruncatedBy != "bytes" || tr.Content != "aaaa\nbbbb" || tr.OutputBytes != 9 {
		t.Fatalf("bytes: %+v", tr)
	}
	tr = TruncateHead(strings.Repeat("x", 20)+"\ny", 100, 10)
	if !tr.FirstLineExceedsLimit || tr.Content != "" || tr.TruncatedBy != "bytes" {
		t.Fatalf("first line: %+v", tr)
	}
	b, _ := (TruncatedBy("")).MarshalJSON()
	if string(b) != "null" {
		t.Fatalf("empty TruncatedBy marshals as %s", b)
	}
}

func TestTruncateTail(t *testing.T) {
	tr := TruncateTail("1\n2\n3\n4\n5", 2, 100)
	if tr.Content != "4\n5" || tr.TruncatedBy != "lines" || tr.OutputLines != 2 {
		t.Fatalf("lines: %+v", tr)
	}
	tr = TruncateTail("aaaa\nbbbb\ncccc", 100, 10)
	if tr.Content != "bbbb\ncccc" || tr.TruncatedBy != "bytes" {
		t.Fatalf("bytes: %+v", tr)
	}
	// last line alone too long: its end is kept, never splitting a character
	line := strings.Repeat("é", 10) // 20 bytes
	tr = TruncateTail("x\n"+line, 100, 7)
	if !tr.LastLinePartial || !utf8.ValidString(tr.Content) || tr.Content != "ééé" {
		t.Fatalf("partial: %+v", tr)
	}
}

func TestTruncateLine(t *testing.T) {
	s, cut := TruncateLine(strings.Repeat("ü", 501), 0)
	if !cut || s != strings.Repeat("ü", 500)+"... [truncated]" {
		t.Fatalf("got %q %v", s, cut)
	}
	if s, cut := TruncateLine("short", 0); cut || s != "short" {
		t.Fatal("short line changed")
	}
}
