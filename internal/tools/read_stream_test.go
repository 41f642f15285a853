package tools

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// referenceRead is read's text path as it was when it read the whole file
// at once: the streaming read must give the same answer for every file
// that fits in its scan limit.
func referenceRead(data []byte, path string, offset int, hasOffset bool, limit int, hasLimit bool) Result {
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	lines := strings.Split(text, "\n")
	start := 0
	if hasOffset && offset > 0 {
		start = offset - 1
	}
	if start >= len(lines) {
		return ErrorResult(fmt.Sprintf("Offset %d is beyond end of file (%d lines total)", offset, len(lines)))
	}
	var selected string
	userLimited := -1
	if hasLimit {
		end := len(lines)
		if limit >= 0 && start+limit < end {
			end = start + limit
		}
		if end < start {
			end = start
		}
		selected = strings.Join(lines[start:end], "\n")
		userLimited = end - start
	} else {
		selected = strings.Join(lines[start:], "\n")
	}
	tr := TruncateHead(selected, 0, 0)
	first := start + 1
	var out string
	var det *readDetails
	switch {
	case tr.FirstLineExceedsLimit:
		out = fmt.Sprintf("[Line %d is %s, exceeds %s limit. Use bash: sed -n '%dp' %s | head -c %d]",
			first, FormatSize(len(lines[start])), FormatSize(DEFAULT_MAX_BYTES), first, path, DEFAULT_MAX_BYTES)
		det = &readDetails{Truncation: &tr}
	case tr.Truncated:
		last := first + tr.OutputLines - 1
		out = tr.Content
		if tr.TruncatedBy == "lines" {
			out += fmt.Sprintf("\n\n[Showing lines %d-%d of %d. Use offset=%d to continue.]", first, last, len(lines), last+1)
		} else {
			out += fmt.Sprintf("\n\n[Showing lines %d-%d of %d (%s limit). Use offset=%d to continue.]",
				first, last, len(lines), FormatSize(DEFAULT_MAX_BYTES), last+1)
		}
		det = &readDetails{Truncation: &tr}
	case userLimited >= 0 && start+userLimited < len(lines):
		remaining := len(lines) - (start + userLimited)
		out = tr.Content + fmt.Sprintf("\n\n[%d more lines in file. Use offset=%d to continue.]", remaining, start+userLimited+1)
	default:
		out = tr.Content
	}
	res := TextResult(out)
	if det != nil {
		res.Details = details(det)
	}
	return res
}

// randomText makes text with short and long lines, CRs, multi-byte and
// invalid UTF-8, sometimes ending in a newline.
func randomText(rng *rand.Rand) []byte {
	var b bytes.Buffer
	nlines := rng.IntN(2500)
	if rng.IntN(4) == 0 {
		nlines = rng.IntN(5)
	}
	for i := 0; i < nlines; i++ {
		n := rng.IntN(40)
		switch rng.IntN(400) {
		case 0:
			// around and over the byte limit: mostly one letter, quick to make
			long := bytes.Repeat([]byte{'L'}, 20_000+rng.IntN(60_000))
			long[rng.IntN(len(long))] = 0xff
			b.Write(long)
			n = 0
		case 1:
			n = 0
		}
		for j := 0; j < n; j++ {
			switch rng.IntN(30) {
			case 0:
				b.WriteString("é")
			case 1:
				b.WriteString("漢")
			case 2:
				b.WriteByte(0xff)
			case 3:
				b.WriteString("\xe6\xbc") // a cut character
			case 4:
				b.WriteByte('\r')
			default:
				b.WriteByte(byte('a' + rng.IntN(26)))
			}
		}
		if i < nlines-1 || rng.IntN(2) == 0 {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func TestReadStreamingMatchesWholeFileRead(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir}
	rng := rand.New(rand.NewPCG(1, 2))
	defer func(n int) { readChunkSize = n }(readChunkSize)
	for iter := 0; iter < 50; iter++ {
		data := randomText(rng)
		if len(data) > 0 && detectImageMime(data) != "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		readChunkSize = []int{1, 2, 3, 7, 100, 4096, 256 << 10}[iter%7]
		if readChunkSize < 100 && len(data) > 5_000 {
			readChunkSize += 100 // keep the test quick under -race
		}
		lines := bytes.Count(data, []byte{'\n'}) + 1
		cases := []map[string]any{{"path": "f.txt"}}
		for k := 0; k < 4; k++ {
			args := map[string]any{"path": "f.txt"}
			if rng.IntN(3) > 0 {
				args["offset"] = rng.IntN(lines+3) - 1
			}
			if rng.IntN(2) == 0 {
				args["limit"] = rng.IntN(lines+3) - 1
			}
			cases = append(cases, args)
		}
		for _, args := range cases {
			off, hasOff := args["offset"].(int)
			lim, hasLim := args["limit"].(int)
			want := referenceRead(data, "f.txt", off, hasOff, lim, hasLim)
			got := run(t, env, "read", args)
			if text(got) != text(want) || got.IsError != want.IsError || string(got.Details) != string(want.Details) {
				t.Fatalf("iteration %d, chunk %d, args %v, %d bytes:\n got %.300q\n     %s\nwant %.300q\n     %s",
					iter, readChunkSize, args, len(data), text(got), got.Details, text(want), want.Details)
			}
		}
	}
}

// sparseFile makes a file of size bytes that takes no disk space (it reads
// as zero bytes).
func sparseFile(t *testing.T, dir string, size int64) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("files are not sparse unless marked so on Windows")
	}
	p := filepath.Join(dir, "sparse.bin")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Skipf("cannot make a %d-byte sparse file: %v", size, err)
	}
	return p
}

// allocated returns the bytes allocated by fn.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A file larger than everything read looks at is scanned up to the limit in
// small chunks: bounded time, bounded memory, a clear note.
func TestReadHugeFileIsBounded(t *testing.T) {
	dir := t.TempDir()
	defer func(n int64) { readScanLimit = n }(readScanLimit)
	readScanLimit = 64 << 20  // the real limit is 1 GiB: this keeps -race quick
	sparseFile(t, dir, 1<<30) // zero bytes: one line
	var r Result
	var took time.Duration
	alloc := allocated(func() {
		r, took = withinFor(t, heavyDeadline, context.Background(), Env{Cwd: dir}, "read", map[string]any{"path": "sparse.bin"})
	})
	t.Logf("read of a 1 GiB file, scan limit 64 MiB: %v, %d bytes allocated", took, alloc)
	want := "[Line 1 is more than 64.0MB, exceeds 50.0KB limit. Use bash: sed -n '1p' sparse.bin | head -c 51200]"
	if got := mustText(t, r); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if alloc > 16<<20 {
		t.Fatalf("read allocated %d bytes", alloc)
	}

	// lines beyond the scan limit: the note says the count is a lower bound
	readScanLimit = 1 << 20
	var b bytes.Buffer
	for i := 1; b.Len() < 2<<20; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	writeFile(t, dir, "lines.txt", b.String())
	seen := bytes.Count(b.Bytes()[:readScanLimit], []byte{'\n'}) + 1 // lines begun in the first 1 MB
	got := mustText(t, run(t, Env{Cwd: dir}, "read", map[string]any{"path": "lines.txt"}))
	want = fmt.Sprintf("line 2000\n\n[Showing lines 1-2000 of at least %d (read looks at the first 1.0MB of a file). Use offset=2001 to continue.]", seen)
	if !strings.HasSuffix(got, want) {
		t.Fatalf("note: %q\nwant suffix %q", got[len(got)-150:], want)
	}
	got = mustText(t, run(t, Env{Cwd: dir}, "read", map[string]any{"path": "lines.txt", "offset": 10, "limit": 2}))
	want = fmt.Sprintf("line 10\nline 11\n\n[At least %d more lines in file (read looks at the first 1.0MB of a file). Use offset=12 to continue.]", seen-11)
	if got != want {
		t.Fatalf("limit note: %q\nwant %q", got, want)
	}
	wantError(t, run(t, Env{Cwd: dir}, "read", map[string]any{"path": "lines.txt", "offset": 200000}),
		fmt.Sprintf("Offset 200000 is beyond the first 1.0MB of the file (%d lines), which is as far as read looks. Use bash to read further (e.g. sed -n '200000,201999p' lines.txt).", seen))
}

// Abort stops a read that is scanning a very large file.
func TestReadAbortWhileScanning(t *testing.T) {
	dir := t.TempDir()
	sparseFile(t, dir, 1<<40) // 1 TiB: minutes to scan
	defer func(n int64) { readScanLimit = n }(readScanLimit)
	readScanLimit = 1 << 62
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	r, took := withinFor(t, heavyDeadline, ctx, Env{Cwd: dir}, "read", map[string]any{"path": "sparse.bin"})
	t.Logf("read returned %v after it started (abort at 200ms)", took)
	wantError(t, r, "Operation aborted")
}

// Images are read whole but only up to a limit.
func TestReadImageLimit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big.png")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'})
	f.Truncate(readImageLimit + 1)
	f.Close()
	wantError(t, run(t, Env{Cwd: dir}, "read", map[string]any{"path": "big.png"}),
		"Image file big.png is 20.0MB; read returns images up to 20.0MB. Use bash to inspect or shrink it.")
}
