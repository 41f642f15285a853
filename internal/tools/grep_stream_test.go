package tools

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// referenceGrep is grep's search of one file as it was when it read the
// whole file at once, with the output phrased as the tool phrases it.
func referenceGrep(data []byte, display string, re *regexp.Regexp, contextLines, limit int) string {
	var out []string
	matches := 0
	linesTruncated, limitReached := false, false
	if bytes.IndexByte(data, 0) < 0 {
		text := strings.ToValidUTF8(string(data), "\uFFFD")
		text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
		lines := strings.Split(text, "\n")
		if strings.HasSuffix(text, "\n") {
			lines = lines[:len(lines)-1]
		}
		for i, line := range lines {
			if !re.MatchString(line) {
				continue
			}
			matches++
			from, to := max(0, i-contextLines), min(len(lines)-1, i+contextLines)
			for j := from; j <= to; j++ {
				cut, was := TruncateLine(lines[j], GREP_MAX_LINE_LENGTH)
				linesTruncated = linesTruncated || was
				if j == i {
					out = append(out, fmt.Sprintf("%s:%d: %s", display, j+1, cut))
				} else {
					out = append(out, fmt.Sprintf("%s-%d- %s", display, j+1, cut))
				}
			}
			if matches >= limit {
				limitReached = true
				break
			}
		}
	}
	if matches == 0 {
		return "No matches found"
	}
	tr := TruncateHead(strings.Join(out, "\n"), int(^uint(0)>>1), DEFAULT_MAX_BYTES)
	var notices []string
	if limitReached {
		notices = append(notices, fmt.Sprintf("%d matches limit reached. Use limit=%d for more, or refine pattern", limit, limit*2))
	}
	if tr.Truncated {
		notices = append(notices, FormatSize(DEFAULT_MAX_BYTES)+" limit reached")
	}
	if linesTruncated {
		notices = append(notices, fmt.Sprintf("Some lines truncated to %d chars. Use read tool to see full lines", GREP_MAX_LINE_LENGTH))
	}
	if len(notices) == 0 {
		return tr.Content
	}
	return tr.Content + "\n\n[" + strings.Join(notices, ". ") + "]"
}

func randomGrepText(rng *rand.Rand) []byte {
	var b bytes.Buffer
	nlines := rng.IntN(400)
	for i := 0; i < nlines; i++ {
		n := rng.IntN(30)
		if rng.IntN(25) == 0 {
			n = 400 + rng.IntN(5000) // longer than the shown part, and than the line buffer
		}
		for j := 0; j < n; j++ {
			switch rng.IntN(40) {
			case 0:
				b.WriteString("né")
			case 1:
				b.WriteString("漢")
			case 2:
				b.WriteByte(0xff)
			case 3:
				b.WriteString("needle")
			default:
				b.WriteByte(byte('a' + rng.IntN(26)))
			}
		}
		switch rng.IntN(8) {
		case 0:
			b.WriteString("\r\n")
		case 1:
			b.WriteByte('\r')
		default:
			b.WriteByte('\n')
		}
	}
	if rng.IntN(3) == 0 {
		b.Truncate(max(0, b.Len()-1)) // no final newline
	}
	return b.Bytes()
}

func TestGrepStreamingMatchesWholeFileGrep(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	rng := rand.New(rand.NewPCG(3, 4))
	defer func(n, m int) { readChunkSize, grepLineBuffer = n, m }(readChunkSize, grepLineBuffer)
	grepLineBuffer = 4*GREP_MAX_LINE_LENGTH + 100
	patterns := []string{"needle", "^needle", "needle$", "e.*e", "^$", "é", "[a-c]{3}", "(?i)NEEDLE", "\\bneedle"}
	for iter := 0; iter < 150; iter++ {
		data := randomGrepText(rng)
		limit := []int{1, 2, 5, 100, 100000}[rng.IntN(5)]
		if rng.IntN(10) == 0 && len(data) > 0 {
			// a NUL byte somewhere: the file is binary (the whole file is
			// read when the limit is not reached first)
			data[rng.IntN(len(data))] = 0
			limit = 100000
		}
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		readChunkSize = []int{1, 3, 7, 100, 4096, 256 << 10}[iter%6]
		if readChunkSize < 100 && len(data) > 5_000 {
			readChunkSize += 100 // keep the test quick under -race
		}
		pattern := patterns[rng.IntN(len(patterns))]
		contextLines := []int{0, 0, 1, 2, 5}[rng.IntN(5)]
		want := referenceGrep(data, "f.txt", regexp.MustCompile(pattern), contextLines, limit)
		args := map[string]any{"pattern": pattern, "path": "f.txt", "context": contextLines, "limit": limit}
		got := text(run(t, env, "grep", args))
		if got != want {
			// Past the output limit grep stops early, so whether the match
			// limit would have been reached is not known: the shown lines
			// must still agree.
			gotBody, _, _ := strings.Cut(got, "\n\n[")
			wantBody, _, _ := strings.Cut(want, "\n\n[")
			if strings.Contains(want, "50.0KB limit reached") && strings.Contains(got, "50.0KB limit reached") && gotBody == wantBody {
				continue
			}
			t.Fatalf("iteration %d, chunk %d, %v, %d bytes:\n got %.600q\nwant %.600q", iter, readChunkSize, args, len(data), got, want)
		}
	}
}

// A file that is one enormous line is searched as a stream: bounded
// memory, and the match is found wherever it is.
func TestGrepHugeLineIsBounded(t *testing.T) {
	dir := t.TempDir()
	defer func(n, m int) { readChunkSize, grepLineBuffer = n, m }(readChunkSize, grepLineBuffer)
	grepLineBuffer = 256 << 10 // the real buffer is 4 MiB: this keeps -race quick
	const size = 4 << 20
	f, err := os.Create(filepath.Join(dir, "one-line.txt"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for i := 0; i < size>>20; i++ {
		f.Write(chunk)
	}
	f.WriteString("needle\nsecond line\n")
	f.Close()
	var r Result
	var took time.Duration
	alloc := allocated(func() {
		r, took = withinFor(t, heavyDeadline, context.Background(), Env{Cwd: dir}, "grep", map[string]any{"pattern": "needle"})
	})
	t.Logf("grep over a 4 MiB line (line buffer 256 KiB): %v, %d bytes allocated", took, alloc)
	want := "one-line.txt:1: " + strings.Repeat("x", 500) + "... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]"
	if got := mustText(t, r); got != want {
		t.Fatalf("got %.200q", got)
	}
	if alloc > size/2 {
		t.Fatalf("grep allocated %d bytes for a 4 MiB file", alloc)
	}

	// and abort stops it in the middle of the line: read a byte at a time,
	// the 4 MiB take seconds on any machine, far beyond the abort at 50 ms
	readChunkSize = 1
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	r, took = withinFor(t, heavyDeadline, ctx, Env{Cwd: dir}, "grep", map[string]any{"pattern": "needle$"})
	t.Logf("grep aborted after %v (abort at 50ms)", took)
	wantError(t, r, "Operation aborted")
}
