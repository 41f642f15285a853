package tools

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

//go:embed grep.md
var grepDescription string

const grepDefaultLimit = 100

type grepTool struct{ env Env }

func (t *grepTool) Name() string        { return "grep" }
func (t *grepTool) Description() string { return strings.TrimSpace(grepDescription) }
func (t *grepTool) Parameters() json.RawMessage {
	return objectSchema(
		prop{"pattern", typed("string", "Regular expression (or literal text with literal=true) to search for"), true},
		prop{"path", typed("string", "Directory or file to search (default: the working directory)"), false},
		prop{"glob", typed("string", "Only search files matching this glob, e.g. '*.go' or 'internal/**/*_test.go'"), false},
		prop{"ignoreCase", typed("boolean", "Match without regard to case (default: false)"), false},
		prop{"literal", typed("boolean", "Treat pattern as literal text, not a regular expression (default: false)"), false},
		prop{"context", typed("number", "Lines of context to show before and after each match (default: 0)"), false},
		prop{"limit", typed("number", "Maximum number of matches to return (default: 100)"), false},
	)
}

type grepDetails struct {
	Truncation        *Truncation `json:"truncation,omitempty"`
	MatchLimitReached int         `json:"matchLimitReached,omitempty"`
	LinesTruncated    bool        `json:"linesTruncated,omitempty"`
}

func (t *grepTool) Execute(ctx context.Context, call Call) (Result, error) {
	a, err := parseArgs("grep", call.Args)
	if err != nil {
		return errResult(err), nil
	}
	pattern, _, err := a.str("pattern", true)
	if err != nil {
		return errResult(err), nil
	}
	searchDir, _, err := a.str("path", false)
	if err != nil {
		return errResult(err), nil
	}
	glob, _, err := a.str("glob", false)
	if err != nil {
		return errResult(err), nil
	}
	ignoreCase, err := a.boolean("ignoreCase")
	if err != nil {
		return errResult(err), nil
	}
	literal, err := a.boolean("literal")
	if err != nil {
		return errResult(err), nil
	}
	contextLines, _, err := a.integer("context")
	if err != nil {
		return errResult(err), nil
	}
	limit, hasLimit, err := a.integer("limit")
	if err != nil {
		return errResult(err), nil
	}
	if !hasLimit {
		limit = grepDefaultLimit
	}
	limit = max(1, limit)
	contextLines = max(0, contextLines)

	if searchDir == "" {
		searchDir = "."
	}
	root := resolvePath(searchDir, t.env.Cwd)
	st, err := os.Stat(root)
	if err != nil {
		return ErrorResult("Path not found: " + root), nil
	}
	expr := pattern
	if literal {
		expr = regexp.QuoteMeta(pattern)
	}
	if ignoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return ErrorResult("regex parse error: " + err.Error()), nil
	}
	var include *pathGlob
	exclude := false
	if glob != "" {
		g := glob
		if strings.HasPrefix(g, "!") {
			exclude, g = true, g[1:]
		}
		if include, err = compilePathGlob(g); err != nil {
			return ErrorResult(fmt.Sprintf("Invalid glob %q: %v", glob, err)), nil
		}
	}

	g := &grepper{re: re, context: min(contextLines, grepMaxContext), limit: limit}
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			return ErrorResult(errNotRegular(root, st.Mode(), "grep searches").Error()), nil
		}
		if err := g.searchFile(ctx, root, filepath.Base(root)); err != nil {
			if ctx.Err() != nil {
				return ErrorResult("Operation aborted"), nil
			}
			return ErrorResult(err.Error()), nil
		}
	} else {
		err = walkFiles(ctx, root, func(rel string, d fs.DirEntry) error {
			if d.IsDir() {
				if exclude && include.match(rel) {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if include != nil && include.match(rel) == exclude {
				return nil
			}
			if err := g.searchFile(ctx, filepath.Join(root, filepath.FromSlash(rel)), rel); err != nil {
				return err
			}
			if g.done() {
				return errStopWalk
			}
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return ErrorResult("Operation aborted"), nil
			}
			return ErrorResult(err.Error()), nil
		}
	}
	out, matches, limitReached, linesTruncated := g.out, g.matches, g.limitReached, g.linesTruncated
	if matches == 0 {
		return TextResult("No matches found"), nil
	}
	tr := TruncateHead(strings.Join(out, "\n"), int(^uint(0)>>1), DEFAULT_MAX_BYTES)
	text := tr.Content
	var det grepDetails
	var notices []string
	if limitReached {
		notices = append(notices, fmt.Sprintf("%d matches limit reached. Use limit=%d for more, or refine pattern", limit, limit*2))
		det.MatchLimitReached = limit
	}
	if tr.Truncated {
		notices = append(notices, FormatSize(DEFAULT_MAX_BYTES)+" limit reached")
		det.Truncation = &tr
	}
	if linesTruncated {
		notices = append(notices, fmt.Sprintf("Some lines truncated to %d chars. Use read tool to see full lines", GREP_MAX_LINE_LENGTH))
		det.LinesTruncated = true
	}
	res := TextResult(text)
	if len(notices) > 0 {
		res = TextResult(text + "\n\n[" + strings.Join(notices, ". ") + "]")
		res.Details = details(det)
	}
	return res, nil
}

// grepMaxContext bounds the context lines around a match: more could not be
// shown within the output limit anyway.
const grepMaxContext = DEFAULT_MAX_LINES

// grepLineBuffer is how much of one line grep holds in memory; a longer
// line is matched as a stream (slower: the regular expression engine reads
// it rune by rune) and shown by its beginning. It must hold the shown part
// (4*GREP_MAX_LINE_LENGTH bytes).
var grepLineBuffer = 4 << 20

// grepper searches files one after another, collecting output lines in
// rg's order until the match limit or the output limit is reached. Its
// memory is bounded by those limits, the context lines and one line buffer,
// whatever the size of the files.
type grepper struct {
	re      *regexp.Regexp
	context int
	limit   int
	raw     []byte // read buffer, shared by the files searched
	text    []byte // line buffer, shared by the files searched

	out            []string
	outBytes       int
	matches        int
	limitReached   bool
	linesTruncated bool
}

// done reports whether the search can stop: the match limit is reached or
// more output is collected than the output limit lets through.
func (g *grepper) done() bool { return g.limitReached || g.outBytes > DEFAULT_MAX_BYTES }

// searchFile adds the matches of one file. A file that turns out to be
// binary (a NUL byte in what is read of it) adds nothing; one that cannot be
// opened or is not a regular file is skipped.
func (g *grepper) searchFile(ctx context.Context, abs, display string) error {
	f, _, err := openRegular(abs, "grep searches")
	if err != nil {
		return nil
	}
	defer f.Close()
	if g.raw == nil {
		g.raw = make([]byte, readChunkSize)
	}
	lr := &lineReader{ctx: ctx, r: f, raw: g.raw, buf: g.text[:0]}
	defer func() { g.text = lr.buf }()

	type shownLine struct {
		text string // cut to GREP_MAX_LINE_LENGTH characters
		cut  bool
	}
	ring := make([]shownLine, 2*g.context+1) // the latest lines
	var pending []int                        // matched lines whose block is not out yet
	var out []string
	outBytes, matches, stopAt := 0, 0, -1
	cut := false
	emit := func(m, last int) {
		for j := max(0, m-g.context); j <= last; j++ {
			sl := ring[j%len(ring)]
			sep := "-%d- "
			if j == m {
				sep = ":%d: "
			}
			l := display + fmt.Sprintf(sep, j+1) + sl.text
			out = append(out, l)
			outBytes += len(l) + 1
			cut = cut || sl.cut
		}
	}
	n := 0 // lines read
	for ; ; n++ {
		line, long, ok := lr.next()
		if !ok {
			if n == 0 && lr.err == nil && !lr.binary {
				line, ok = nil, true // an empty file is one empty line
			} else {
				break
			}
		}
		if lr.binary {
			return nil
		}
		matched := false
		var shown shownLine
		if long {
			// Show the beginning; match the whole line as a stream.
			head := lr.buf[lr.off:]
			head = head[:min(len(head), 4*GREP_MAX_LINE_LENGTH+4)]
			shown.text, shown.cut = TruncateLine(string(head), GREP_MAX_LINE_LENGTH)
			rest := &lineRest{l: lr}
			if stopAt < 0 {
				matched = g.re.MatchReader(bufio.NewReaderSize(rest, 64<<10))
			}
			_, _ = io.Copy(io.Discard, rest)
			if lr.binary {
				return nil
			}
		} else {
			if stopAt < 0 {
				matched = g.re.Match(line)
			}
			if matched || g.context > 0 {
				shown.text, shown.cut = TruncateLine(string(line), GREP_MAX_LINE_LENGTH)
			}
		}
		if lr.err != nil {
			break
		}
		ring[n%len(ring)] = shown
		if matched {
			matches++
			pending = append(pending, n)
			if g.matches+matches >= g.limit {
				stopAt = n + g.context // the block of this match is the last
			}
		}
		for len(pending) > 0 && pending[0]+g.context <= n {
			emit(pending[0], n)
			pending = pending[1:]
		}
		if stopAt >= 0 && n >= stopAt {
			break
		}
		if g.outBytes+outBytes > DEFAULT_MAX_BYTES {
			pending = nil // beyond the output limit
			break
		}
	}
	if lr.err != nil {
		if errors.Is(lr.err, errAborted) {
			return lr.err
		}
		return nil // unreadable: skipped, as rg does
	}
	for _, m := range pending {
		emit(m, n-1)
	}
	g.out = append(g.out, out...)
	g.outBytes += outBytes
	g.matches += matches
	g.linesTruncated = g.linesTruncated || cut
	if stopAt >= 0 {
		g.limitReached = true
	}
	return nil
}

// lineReader splits a file into lines the way grep reads them: the text is
// made valid UTF-8, and "\r\n", "\r" and "\n" each end a line. It notes a
// NUL byte (binary) and holds at most grepLineBuffer bytes of a line; a
// longer line is reported as long and read on through lineRest.
type lineReader struct {
	ctx    context.Context
	r      io.Reader
	raw    []byte
	fixer  utf8Fixer
	buf    []byte // text read and not consumed: buf[off:]
	off    int
	eof    bool
	skipLF bool // the last line ended in "\r": a "\n" next belongs to it
	binary bool
	err    error // a read error or errAborted
}

// fill reads the next chunk; false when nothing more can come.
func (l *lineReader) fill() bool {
	if l.eof {
		return false
	}
	if l.off > 0 {
		l.buf = l.buf[:copy(l.buf, l.buf[l.off:])]
		l.off = 0
	}
	n, err := readChunk(l.ctx, l.r, l.raw)
	if n > 0 {
		if bytes.IndexByte(l.raw[:n], 0) >= 0 {
			l.binary = true
		}
		l.grow(3 * n) // repairing invalid UTF-8 may triple the bytes
		l.buf = append(l.buf, l.fixer.fix(l.raw[:n], false)...)
	}
	switch {
	case err == io.EOF:
		l.eof = true
		l.buf = append(l.buf, l.fixer.fix(nil, true)...)
	case err != nil:
		l.eof, l.err = true, err
	}
	return true
}

// grow makes room for n more bytes: doubling, but never much past what a
// line may hold.
func (l *lineReader) grow(n int) {
	if cap(l.buf)-len(l.buf) >= n {
		return
	}
	c := max(2*cap(l.buf), len(l.buf)+n)
	c = max(min(c, grepLineBuffer+3*len(l.raw)), len(l.buf)+n)
	b := make([]byte, len(l.buf), c)
	copy(b, l.buf)
	l.buf = b
}

// skipBreakLF drops the "\n" of a "\r\n" split between reads.
func (l *lineReader) skipBreakLF() bool {
	for l.skipLF {
		if l.off < len(l.buf) {
			if l.buf[l.off] == '\n' {
				l.off++
			}
			l.skipLF = false
		} else if !l.fill() {
			l.skipLF = false
		}
	}
	return true
}

// consumeBreak consumes the line break at buf[i].
func (l *lineReader) consumeBreak(i int) {
	l.skipLF = l.buf[i] == '\r'
	l.off = i + 1
}

// next returns the next line without its break (valid until the next call),
// or long = true for a line longer than grepLineBuffer, which the caller
// must read through lineRest. ok is false at the end of the file.
func (l *lineReader) next() (line []byte, long, ok bool) {
	l.skipBreakLF()
	for {
		if i := indexBreak(l.buf[l.off:]); i >= 0 {
			start := l.off
			l.consumeBreak(start + i)
			return l.buf[start : start+i], false, true
		}
		if len(l.buf)-l.off >= grepLineBuffer {
			return nil, true, true
		}
		if !l.fill() {
			if l.off < len(l.buf) {
				start := l.off
				l.off = len(l.buf)
				return l.buf[start:], false, true
			}
			return nil, false, false
		}
	}
}

func indexBreak(b []byte) int {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
			return j
		}
		return i
	}
	return bytes.IndexByte(b, '\r')
}

// lineRest reads the rest of a long line, consuming its break.
type lineRest struct {
	l    *lineReader
	done bool
}

func (r *lineRest) Read(p []byte) (int, error) {
	l := r.l
	if !r.done && l.ctx.Err() != nil {
		l.err, l.eof, r.done = errAborted, true, true
	}
	for !r.done && l.off >= len(l.buf) {
		if !l.fill() {
			r.done = true
		}
	}
	if r.done {
		return 0, io.EOF
	}
	b := l.buf[l.off:]
	if i := indexBreak(b); i >= 0 && i <= len(p) {
		n := copy(p, b[:i])
		l.consumeBreak(l.off + i)
		r.done = true
		return n, nil
	}
	n := copy(p, b)
	l.off += n
	return n, nil
}
