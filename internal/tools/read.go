package tools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
)

//go:embed read.md
var readDescription string

type readTool struct{ env Env }

func (t *readTool) Name() string        { return "read" }
func (t *readTool) Description() string { return strings.TrimSpace(readDescription) }
func (t *readTool) Parameters() json.RawMessage {
	return objectSchema(
		prop{"path", typed("string", "Path of the file to read, relative to the working directory or absolute"), true},
		prop{"offset", typed("number", "1-based line number to start reading at"), false},
		prop{"limit", typed("number", "Maximum number of lines to return"), false},
	)
}

type readDetails struct {
	Truncation *Truncation `json:"truncation,omitempty"`
}

// readScanLimit is how much of a file read looks at: it counts lines up to
// here and no further (a variable so tests can lower it).
var readScanLimit int64 = 1 << 30

// readImageLimit is the largest image read returns as an attachment.
const readImageLimit = 20 << 20

func (t *readTool) Execute(ctx context.Context, call Call) (Result, error) {
	a, err := parseArgs("read", call.Args)
	if err != nil {
		return errResult(err), nil
	}
	path, _, err := a.str("path", true)
	if err != nil {
		return errResult(err), nil
	}
	offset, hasOffset, err := a.integer("offset")
	if err != nil {
		return errResult(err), nil
	}
	limit, hasLimit, err := a.integer("limit")
	if err != nil {
		return errResult(err), nil
	}
	if err := ctx.Err(); err != nil {
		return ErrorResult("Operation aborted"), nil
	}
	abs := resolvePath(path, t.env.Cwd)
	if files := t.env.Files; files != nil && files.Read != nil && !isImageFile(abs) {
		if text, err := files.Read(ctx, abs); err == nil {
			return scanText(ctx, strings.NewReader(text), path, offset, hasOffset, limit, hasLimit), nil
		}
	}
	f, st, err := openChecked(abs, "read reads")
	if err != nil {
		return ErrorResult(err.Error()), nil
	}
	defer f.Close()

	// The first bytes tell an image from text.
	head := make([]byte, 32)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return ErrorResult(err.Error()), nil
	}
	head = head[:n]
	if mime := detectImageMime(head); mime != "" {
		if st.Size() > readImageLimit {
			return ErrorResult(imageTooLarge(path, st.Size())), nil
		}
		rest, err := readAllCapped(ctx, f, readImageLimit-int64(len(head)), st.Size())
		switch {
		case errors.Is(err, errAborted):
			return ErrorResult("Operation aborted"), nil
		case errors.Is(err, errTooLarge):
			return ErrorResult(imageTooLarge(path, -1)), nil
		case err != nil:
			return ErrorResult(err.Error()), nil
		}
		data := append(head, rest...)
		return Result{Content: []ai.Content{
			ai.Text(fmt.Sprintf("Read image file [%s]", mime)),
			ai.Image(base64.StdEncoding.EncodeToString(data), mime),
		}}, nil
	}

	return scanText(ctx, io.MultiReader(bytes.NewReader(head), f), path, offset, hasOffset, limit, hasLimit), nil
}

// scanText is read's answer for the text of r: the selected lines within
// the output limits.
func scanText(ctx context.Context, r io.Reader, path string, offset int, hasOffset bool, limit int, hasLimit bool) Result {
	start := 0
	if hasOffset && offset > 0 {
		start = offset - 1
	}
	end := -1 // no end
	if hasLimit && limit >= 0 {
		end = start + limit
	}
	sc := newLineScan(start, end)
	if err := sc.scan(ctx, r, readScanLimit); err != nil {
		if errors.Is(err, errAborted) {
			return ErrorResult("Operation aborted")
		}
		return ErrorResult(err.Error())
	}
	return sc.result(path, offset, hasLimit)
}

// isImageFile says whether the file at abs on disk is an image (read
// returns those from the disk, as attachments).
func isImageFile(abs string) bool {
	f, _, err := openRegular(abs, "read reads")
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 32)
	n, _ := io.ReadFull(f, head)
	return detectImageMime(head[:n]) != ""
}

// openChecked stats abs (following links) and opens it, with Node-style
// error texts, refusing directories and anything but a regular file.
func openChecked(abs, verb string) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(abs)
	if err != nil {
		return nil, nil, fsError(err, "access", abs)
	}
	if st.IsDir() {
		return nil, nil, errors.New("EISDIR: illegal operation on a directory, read")
	}
	if !st.Mode().IsRegular() {
		return nil, nil, errNotRegular(abs, st.Mode(), verb)
	}
	f, st, err := openRegular(abs, verb)
	if err != nil {
		return nil, nil, fsError(err, "open", abs)
	}
	return f, st, nil
}

func imageTooLarge(path string, size int64) string {
	what := "larger than " + FormatSize(readImageLimit)
	if size >= 0 {
		what = FormatSize(int(size))
	}
	return fmt.Sprintf("Image file %s is %s; read returns images up to %s. Use bash to inspect or shrink it.", path, what, FormatSize(readImageLimit))
}

// lineScan reads text line by line (lines split on "\n", so a final newline
// ends in an empty last line) and keeps the lines from start up to end (-1:
// to the end of the file) that fit in the output limits, as TruncateHead
// would keep them from the whole selection, while it counts every line. It
// holds at most about twice DEFAULT_MAX_BYTES, whatever the file's size.
type lineScan struct {
	start, end int // the selected lines [start, end); end -1 = no end

	line    int   // index of the line being read
	lineLen int64 // its length so far
	cur     []byte
	curOver bool // cur stopped growing: the line is over the byte limit
	pos     int64

	kept      []string
	keptBytes int
	stopped   bool // the output limit was reached
	by        TruncatedBy
	firstLen  int64 // length of the first selected line, when it was too long
	firstOver bool

	winStart, winEnd int64 // text offsets of the selection
	winEnded         bool
	incomplete       bool // the scan limit was reached before the end
	lines            int  // lines in the file (valid after scan)
}

func newLineScan(start, end int) *lineScan { return &lineScan{start: start, end: end} }

func (s *lineScan) inWindow(i int) bool { return i >= s.start && (s.end < 0 || i < s.end) }

// collecting reports whether the current line may still be kept.
func (s *lineScan) collecting() bool { return !s.stopped && s.inWindow(s.line) }

// scan reads r to the end or to limit bytes.
func (s *lineScan) scan(ctx context.Context, r io.Reader, limit int64) error {
	buf := make([]byte, readChunkSize)
	var fixer utf8Fixer
	var read int64
	for {
		want := buf
		if rest := limit - read; rest < int64(len(want)) {
			if rest <= 0 {
				// At the limit: is there more?
				n, _ := readChunk(ctx, r, buf[:1])
				if n > 0 {
					s.incomplete = true
				}
				break
			}
			want = buf[:rest]
		}
		n, err := readChunk(ctx, r, want)
		read += int64(n)
		if n > 0 {
			s.feed(fixer.fix(want[:n], false))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return errAborted
	}
	if !s.incomplete {
		s.feed(fixer.fix(nil, true))
	}
	s.finish()
	return nil
}

// feed takes the next piece of valid text.
func (s *lineScan) feed(p []byte) {
	for len(p) > 0 {
		if !s.collecting() {
			// Nothing of this line is kept: jump from newline to newline,
			// stopping only where the selection starts or ends.
			need := -1 // the newline in p after which that happens
			switch {
			case s.line < s.start:
				need = s.start - 1 - s.line
			case s.end >= 0 && s.line < s.end:
				need = s.end - 1 - s.line
			}
			k := bytes.Count(p, newline)
			if need < 0 || need >= k {
				if k == 0 {
					s.lineLen += int64(len(p))
				} else {
					s.line += k
					s.lineLen = int64(len(p) - bytes.LastIndexByte(p, '\n') - 1)
				}
				s.pos += int64(len(p))
				return
			}
			i := nthNewline(p, need)
			s.line += need
			s.pos += int64(i)
			s.endLine()
			s.pos++
			if s.line == s.start {
				s.winStart = s.pos
			}
			p = p[i+1:]
			continue
		}
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i]
		}
		if !s.curOver {
			if len(s.cur)+len(seg) > DEFAULT_MAX_BYTES {
				s.curOver, s.cur = true, s.cur[:0]
			} else {
				s.cur = append(s.cur, seg...)
			}
		}
		s.lineLen += int64(len(seg))
		s.pos += int64(len(seg))
		if i < 0 {
			return
		}
		s.endLine()
		s.pos++ // the newline
		if s.line == s.start {
			s.winStart = s.pos
		}
		p = p[i+1:]
	}
}

var newline = []byte{'\n'}

// nthNewline returns the index of the n-th (0-based) newline in p.
func nthNewline(p []byte, n int) int {
	off := 0
	for {
		i := bytes.IndexByte(p[off:], '\n')
		if n == 0 {
			return off + i
		}
		n--
		off += i + 1
	}
}

// endLine completes the current line (s.pos is at its end) and moves on.
func (s *lineScan) endLine() {
	if s.inWindow(s.line) {
		if s.collecting() {
			s.keep()
		}
		if s.end >= 0 && s.line == s.end-1 {
			s.winEnd, s.winEnded = s.pos, true
		}
	}
	s.line++
	s.lineLen = 0
	s.cur, s.curOver = s.cur[:0], false
}

// keep decides whether the completed current line fits in the output.
func (s *lineScan) keep() {
	n := len(s.kept)
	if n == 0 && s.lineLen > DEFAULT_MAX_BYTES {
		s.stopped, s.by = true, "bytes"
		s.firstOver, s.firstLen = true, s.lineLen
		return
	}
	add := int(s.lineLen)
	if n > 0 {
		add++
	}
	if n >= DEFAULT_MAX_LINES || s.curOver || s.keptBytes+add > DEFAULT_MAX_BYTES {
		s.stopped, s.by = true, "bytes"
		if n >= DEFAULT_MAX_LINES {
			s.by = "lines"
		}
		return
	}
	s.kept = append(s.kept, string(s.cur))
	s.keptBytes += add
}

// finish completes the last line: the text after the last newline (empty
// when the file ends with one), or, when the scan stopped at its limit, the
// part of a line read so far (it is not kept: a line that long is over the
// output limit).
func (s *lineScan) finish() {
	if s.incomplete {
		if s.collecting() {
			if len(s.kept) == 0 {
				s.stopped, s.by = true, "bytes"
				s.firstOver, s.firstLen = true, s.lineLen
			} else {
				s.stopped, s.by = true, "bytes"
				if len(s.kept) >= DEFAULT_MAX_LINES {
					s.by = "lines"
				}
			}
		}
		if !s.winEnded {
			s.winEnd = s.pos
		}
		s.lines = s.line + 1
		return
	}
	s.endLine()
	s.lines = s.line
	if !s.winEnded {
		s.winEnd = s.pos
	}
}

// result phrases the scan as pi's read does.
func (s *lineScan) result(path string, offset int, hasLimit bool) Result {
	scanned := formatLarge(readScanLimit)
	if s.start >= s.lines {
		if s.incomplete {
			return ErrorResult(fmt.Sprintf("Offset %d is beyond the first %s of the file (%d lines), which is as far as read looks. Use bash to read further (e.g. sed -n '%d,%dp' %s).",
				offset, scanned, s.lines, offset, offset+DEFAULT_MAX_LINES-1, path))
		}
		return ErrorResult(fmt.Sprintf("Offset %d is beyond end of file (%d lines total)", offset, s.lines))
	}
	selEnd := s.lines
	if s.end >= 0 && s.end < selEnd {
		selEnd = s.end
	}
	content := strings.Join(s.kept, "\n")
	tr := Truncation{
		Content: content, Truncated: s.stopped, TruncatedBy: s.by,
		TotalLines: selEnd - s.start, TotalBytes: int(s.winEnd - s.winStart),
		OutputLines: len(s.kept), OutputBytes: len(content),
		FirstLineExceedsLimit: s.firstOver,
		MaxLines:              DEFAULT_MAX_LINES, MaxBytes: DEFAULT_MAX_BYTES,
	}
	if s.firstOver {
		tr.OutputLines = 0
	}
	first := s.start + 1
	var out string
	total := strconv.Itoa(s.lines)
	note := ""
	if s.incomplete {
		total = "at least " + total
		note = fmt.Sprintf("; read looks at the first %s of a file", scanned)
	}
	switch {
	case s.firstOver:
		size := formatLarge(s.firstLen)
		if s.incomplete && s.lines == first {
			size = "more than " + size
		}
		out = fmt.Sprintf("[Line %d is %s, exceeds %s limit. Use bash: sed -n '%dp' %s | head -c %d]",
			first, size, FormatSize(DEFAULT_MAX_BYTES), first, path, DEFAULT_MAX_BYTES)
	case s.stopped:
		last := first + len(s.kept) - 1
		out = content
		if s.by == "lines" {
			if note != "" {
				note = " (" + note[2:] + ")"
			}
			out += fmt.Sprintf("\n\n[Showing lines %d-%d of %s%s. Use offset=%d to continue.]", first, last, total, note, last+1)
		} else {
			out += fmt.Sprintf("\n\n[Showing lines %d-%d of %s (%s limit%s). Use offset=%d to continue.]",
				first, last, total, FormatSize(DEFAULT_MAX_BYTES), note, last+1)
		}
	case hasLimit && s.end >= 0 && s.end < s.lines:
		more := strconv.Itoa(s.lines - s.end)
		if s.incomplete {
			more = "At least " + more
			note = " (" + note[2:] + ")"
		}
		out = content + fmt.Sprintf("\n\n[%s more lines in file%s. Use offset=%d to continue.]", more, note, s.end+1)
	default:
		out = content
	}
	res := TextResult(out)
	if s.stopped {
		res.Details = details(&readDetails{Truncation: &tr})
	}
	return res
}

// fsError phrases a file system error the way Node does, which is what the
// model sees from pi.
func fsError(err error, op, path string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("ENOENT: no such file or directory, %s '%s'", op, path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("EACCES: permission denied, %s '%s'", op, path)
	}
	return err
}

// detectImageMime recognises the image formats read returns as images.
func detectImageMime(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}):
		return "image/png"
	case bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && string(b[0:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "image/webp"
	case isBMP(b):
		return "image/bmp"
	}
	return ""
}

// isBMP checks the "BM" signature plus a plausible header, so that a text
// file that happens to start with "BM" is still read as text.
func isBMP(b []byte) bool {
	if len(b) < 26 || b[0] != 'B' || b[1] != 'M' {
		return false
	}
	if binary.LittleEndian.Uint32(b[6:10]) != 0 { // reserved fields
		return false
	}
	switch binary.LittleEndian.Uint32(b[14:18]) { // DIB header size
	case 12, 16, 40, 52, 56, 64, 108, 124:
		return true
	}
	return false
}
