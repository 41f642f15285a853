//go:build unix

package tools

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
)

func TestRunUserBashSanitises(t *testing.T) {
	var mu sync.Mutex
	var deltas []string
	res := RunUserBash(context.Background(), Env{Cwd: t.TempDir()},
		`printf '\033[1;31mred\033[0m\r\n'; printf 'a\001b\tc\n'; printf '\033]0;title\007done\n' >&2; exit 4`,
		func(s string) { mu.Lock(); deltas = append(deltas, s); mu.Unlock() })
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	want := "red\nab\tc\ndone\n"
	if res.Output != want {
		t.Fatalf("output %q want %q", res.Output, want)
	}
	if res.ExitCode == nil || *res.ExitCode != 4 || res.Cancelled || res.Truncated || res.FullOutputPath != "" {
		t.Fatalf("result %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(deltas, "") != want {
		t.Fatalf("deltas %q", deltas)
	}
}

func TestRunUserBashLargeOutput(t *testing.T) {
	res := RunUserBash(context.Background(), Env{Cwd: t.TempDir()}, "seq 1 30000", nil)
	if !res.Truncated || res.FullOutputPath == "" || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("result %+v", res.FullOutputPath)
	}
	defer os.Remove(res.FullOutputPath)
	if !strings.HasSuffix(res.Output, "\n29999\n30000\n") || strings.Count(res.Output, "\n") != 1999 {
		t.Fatalf("output tail wrong: %d lines", strings.Count(res.Output, "\n"))
	}
	full := readFile(t, res.FullOutputPath)
	if !strings.HasPrefix(full, "1\n2\n3\n") || !strings.HasSuffix(full, "30000\n") {
		t.Fatal("spill file incomplete")
	}
}

func TestRunUserBashErrors(t *testing.T) {
	res := RunUserBash(context.Background(), Env{Cwd: "/definitely/not/here"}, "true", nil)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "Working directory does not exist") {
		t.Fatalf("result %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := RunUserBash(ctx, Env{Cwd: t.TempDir()}, "echo hi", nil); !res.Cancelled || res.ExitCode != nil || res.Output != "" {
		t.Fatalf("pre-cancelled result %+v", res)
	}
}

func TestUserOutputDecoderChunkBoundaries(t *testing.T) {
	d := &userOutputDecoder{}
	in := []byte("h\u00e9\x1b[31mllo\x1b[0m w\u20acrld\r\n")
	var out strings.Builder
	for i := range in { // one byte at a time
		out.WriteString(d.decode(in[i:i+1], false))
	}
	out.WriteString(d.decode(nil, true))
	if out.String() != "h\u00e9llo w\u20acrld\n" {
		t.Fatalf("got %q", out.String())
	}
	if got := SanitizeBinaryOutput("a\x00b\x1fc\ufff9d\ufffbe\t\n\r"); got != "abcde\t\n\r" {
		t.Fatalf("sanitize %q", got)
	}
	if got := StripANSI("\x1b[38;5;196mX\x1b[0m\x1b]8;;http://x\x1b\\L\x1b]8;;\x1b\\\x1b(B"); got != "XL" {
		t.Fatalf("strip %q", got)
	}
}
