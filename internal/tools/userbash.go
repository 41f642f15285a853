package tools

import (
	"context"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/pisces-agent/pisces/internal/lazy"
)

// UserBashResult is the outcome of a command the user ran (the RPC "bash"
// command), shaped like pi's BashResult.
type UserBashResult struct {
	Output         string // sanitised output, tail-truncated when Truncated
	ExitCode       *int   // nil when cancelled or killed by a signal
	Cancelled      bool
	Truncated      bool
	FullOutputPath string // temp file with the full output, when it was spilled
	// Err is set when the command could not be started at all (bad working
	// directory, missing shell); the other fields are then empty.
	Err error
}

// ansiPattern matches terminal escape sequences: OSC strings, CSI sequences
// (7-bit and 8-bit) and the short two- and three-byte escapes. Compiled on
// first use, like the other patterns of this package: most sessions never
// run the user-side bash.
var ansiPattern = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(
		"\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)" + // OSC ... BEL | ST
			"|(?:\x1b\\[|\u009b)[0-?]*[ -/]*[@-~]" + // CSI
			"|\x1b[()#%][0-9A-Za-z@]" + // charset / line attributes
			"|\x1b[@-Z\\\\-_`a-z{|}~=>78]") // other two-byte escapes
}}

// incompleteEscape matches the start of an escape sequence cut off at the end
// of a chunk.
var incompleteEscape = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile("\x1b(?:\\[[0-?]*[ -/]*|\\][^\x07\x1b]*\x1b?|[()#%])?$")
}}

// StripANSI removes terminal escape sequences.
func StripANSI(s string) string { return ansiPattern.Get().ReplaceAllString(s, "") }

// SanitizeBinaryOutput drops control characters other than tab, newline and
// carriage return, and the Unicode interlinear annotation characters
// U+FFF9–U+FFFB.
func SanitizeBinaryOutput(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r <= 0x1f:
			return -1
		case r >= 0xfff9 && r <= 0xfffb:
			return -1
		}
		return r
	}, s)
}

// userOutputDecoder turns raw output chunks into sanitised text, holding back
// an incomplete UTF-8 character or escape sequence until the next chunk.
type userOutputDecoder struct{ pending []byte }

func (d *userOutputDecoder) decode(p []byte, final bool) string {
	b := append(d.pending, p...)
	d.pending = nil
	if !final {
		// hold back a trailing incomplete UTF-8 character
		for i := 1; i <= 3 && i <= len(b); i++ {
			c := b[len(b)-i]
			if utf8.RuneStart(c) {
				if !utf8.FullRune(b[len(b)-i:]) {
					d.pending = append([]byte(nil), b[len(b)-i:]...)
					b = b[:len(b)-i]
				}
				break
			}
		}
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if !final {
		if loc := incompleteEscape.Get().FindStringIndex(s); loc != nil && len(s)-loc[0] < 256 {
			d.pending = append([]byte(s[loc[0]:]), d.pending...)
			s = s[:loc[0]]
		}
	}
	return strings.ReplaceAll(SanitizeBinaryOutput(StripANSI(s)), "\r", "")
}

// RunUserBash runs a command for the user (not the model): same shell,
// environment and process-group handling as the bash tool, with output
// stripped of ANSI escapes and binary garbage. onDelta (optional) receives
// each sanitised chunk as it arrives. Cancelling ctx kills the command.
func RunUserBash(ctx context.Context, env Env, command string, onDelta func(string)) UserBashResult {
	if ctx.Err() != nil {
		return UserBashResult{Cancelled: true}
	}
	sink := &outputSink{spills: env.Spills}
	dec := &userOutputDecoder{}
	emit := func(text string) {
		if text == "" {
			return
		}
		sink.write([]byte(text))
		if onDelta != nil {
			onDelta(text)
		}
	}
	run, err := runShell(ctx, env, withPrefix(env, command), 0, func(p []byte) { emit(dec.decode(p, false)) })
	if err != nil {
		sink.finish(false)
		return UserBashResult{Err: err}
	}
	emit(dec.decode(nil, true))
	tr, _ := sink.tail()
	sink.finish(false)
	_, path := sink.tail()
	res := UserBashResult{Output: tr.Content, Truncated: tr.Truncated, FullOutputPath: path}
	if run.aborted || run.exitCode < 0 {
		res.Cancelled = true
	} else {
		code := run.exitCode
		res.ExitCode = &code
	}
	return res
}
