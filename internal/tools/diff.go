package tools

import (
	"fmt"
	"strings"
)

// diffPart is a run of lines that are equal, removed or added. Lines keep
// their "\n" terminator (the last line of a text may lack one).
type diffPart struct {
	kind  byte // ' ', '-', '+'
	lines []string
}

// splitLinesKeep splits s after every "\n"; a final empty piece is dropped.
func splitLinesKeep(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// maxLCSCells bounds the dynamic programming table; beyond it the differing
// middle is reported as one removal and one addition.
const maxLCSCells = 4_000_000

// diffLines computes a line diff of a and b. Within a change, removals come
// before additions.
func diffLines(a, b string) []diffPart {
	x, y := splitLinesKeep(a), splitLinesKeep(b)
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var ops []byte // one per line: ' ', '-', '+'
	var lines []string
	emit := func(k byte, l string) { ops = append(ops, k); lines = append(lines, l) }
	for i := 0; i < pre; i++ {
		emit(' ', x[i])
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	if len(mx)*len(my) > maxLCSCells {
		for _, l := range mx {
			emit('-', l)
		}
		for _, l := range my {
			emit('+', l)
		}
	} else {
		n, m := len(mx), len(my)
		// dp[i][j] = LCS length of mx[i:], my[j:]
		dp := make([][]int32, n+1)
		for i := range dp {
			dp[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if mx[i] == my[j] {
					dp[i][j] = dp[i+1][j+1] + 1
				} else if dp[i+1][j] >= dp[i][j+1] {
					dp[i][j] = dp[i+1][j]
				} else {
					dp[i][j] = dp[i][j+1]
				}
			}
		}
		i, j := 0, 0
		var del, add []string
		flush := func() {
			for _, l := range del {
				emit('-', l)
			}
			for _, l := range add {
				emit('+', l)
			}
			del, add = nil, nil
		}
		for i < n || j < m {
			switch {
			case i < n && j < m && mx[i] == my[j]:
				flush()
				emit(' ', mx[i])
				i++
				j++
			case j >= m || (i < n && dp[i+1][j] >= dp[i][j+1]):
				del = append(del, mx[i])
				i++
			default:
				add = append(add, my[j])
				j++
			}
		}
		flush()
	}
	for i := len(x) - suf; i < len(x); i++ {
		emit(' ', x[i])
	}
	var parts []diffPart
	for i, k := range ops {
		if len(parts) == 0 || parts[len(parts)-1].kind != k {
			parts = append(parts, diffPart{kind: k})
		}
		parts[len(parts)-1].lines = append(parts[len(parts)-1].lines, lines[i])
	}
	return parts
}

func trimNL(l string) string { return strings.TrimSuffix(l, "\n") }

// displayDiff renders the diff pi's clients show: every line prefixed with
// '+', '-' or ' ' and its line number, at most context unchanged lines around
// each change, and "..." where unchanged lines are skipped. It also returns
// the first changed line in the new text (0 when nothing changed).
func displayDiff(oldText, newText string, context int) (string, int) {
	parts := diffLines(oldText, newText)
	width := len(fmt.Sprint(max(len(strings.Split(oldText, "\n")), len(strings.Split(newText, "\n")))))
	pad := strings.Repeat(" ", width)
	var out []string
	oldNum, newNum, first := 1, 1, 0
	lastWasChange := false
	for i, p := range parts {
		if p.kind != ' ' {
			if first == 0 {
				first = newNum
			}
			for _, l := range p.lines {
				if p.kind == '+' {
					out = append(out, fmt.Sprintf("+%*d %s", width, newNum, trimNL(l)))
					newNum++
				} else {
					out = append(out, fmt.Sprintf("-%*d %s", width, oldNum, trimNL(l)))
					oldNum++
				}
			}
			lastWasChange = true
			continue
		}
		nextIsChange := i < len(parts)-1
		if !lastWasChange && !nextIsChange {
			oldNum += len(p.lines)
			newNum += len(p.lines)
			continue
		}
		show := p.lines
		skipStart, skipEnd := 0, 0
		if !lastWasChange {
			skipStart = max(0, len(show)-context)
			show = show[skipStart:]
		}
		if !nextIsChange && len(show) > context {
			skipEnd = len(show) - context
			show = show[:context]
		}
		if skipStart > 0 {
			out = append(out, " "+pad+" ...")
			oldNum += skipStart
			newNum += skipStart
		}
		for _, l := range show {
			out = append(out, fmt.Sprintf(" %*d %s", width, oldNum, trimNL(l)))
			oldNum++
			newNum++
		}
		if skipEnd > 0 {
			out = append(out, " "+pad+" ...")
			oldNum += skipEnd
			newNum += skipEnd
		}
		lastWasChange = false
	}
	return strings.Join(out, "\n"), first
}

// unifiedPatch renders a standard unified diff with file headers only.
func unifiedPatch(path, oldText, newText string, context int) string {
	type line struct {
		kind byte
		text string
	}
	var all []line
	for _, p := range diffLines(oldText, newText) {
		for _, l := range p.lines {
			all = append(all, line{p.kind, l})
		}
	}
	var b strings.Builder
	b.WriteString("--- " + path + "\n+++ " + path + "\n")
	// positions of the lines in old/new numbering
	i := 0
	oldNum, newNum := 1, 1
	for i < len(all) {
		if all[i].kind == ' ' {
			oldNum++
			newNum++
			i++
			continue
		}
		// hunk starts context lines before the change
		start := i
		for k := 0; k < context && start > 0 && all[start-1].kind == ' '; k++ {
			start--
		}
		hOld, hNew := oldNum-(i-start), newNum-(i-start)
		end := i
		for end < len(all) {
			if all[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(all) && all[run].kind == ' ' {
				run++
			}
			if run < len(all) && run-end <= 2*context {
				end = run
				continue
			}
			end = min(run, end+context)
			break
		}
		var body strings.Builder
		oldCount, newCount := 0, 0
		for _, l := range all[start:end] {
			body.WriteByte(l.kind)
			body.WriteString(trimNL(l.text))
			body.WriteByte('\n')
			if !strings.HasSuffix(l.text, "\n") {
				body.WriteString("\\ No newline at end of file\n")
			}
			if l.kind != '+' {
				oldCount++
			}
			if l.kind != '-' {
				newCount++
			}
		}
		if oldCount == 0 {
			hOld--
		}
		if newCount == 0 {
			hNew--
		}
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", hOld, oldCount, hNew, newCount)
		b.WriteString(body.String())
		for _, l := range all[i:end] {
			if l.kind != '+' {
				oldNum++
			}
			if l.kind != '-' {
				newNum++
			}
		}
		i = end
	}
	return b.String()
}
