package tui

import (
	"strconv"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// The Markdown parser is CommonMark (goldmark), built on first use; GFM
// tables and strikethrough are recognised here rather than by goldmark's
// extension package, whose package-level regular expressions (linkify,
// typographer, ...) would be compiled at every start of every mode.
var (
	mdOnce   sync.Once
	mdParser goldmark.Markdown
)

func markdownParser() goldmark.Markdown {
	mdOnce.Do(func() { mdParser = goldmark.New() })
	return mdParser
}

// renderMarkdown renders Markdown source as styled terminal lines no wider
// than width. Unfinished source (a reply still streaming) renders as far as
// it goes: an unclosed code fence runs to the end.
func renderMarkdown(src string, width int, th *Theme) []string {
	if width < 4 {
		width = 4
	}
	var out []string
	for _, part := range splitTables(src) {
		var lines []string
		if part.table != nil {
			lines = renderTable(part.table, width, th)
		} else {
			lines = renderCommonMark(part.text, width, th)
		}
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

func renderCommonMark(src string, width int, th *Theme) []string {
	source := []byte(src)
	doc := markdownParser().Parser().Parse(text.NewReader(source))
	r := &mdRenderer{src: source, th: th}
	var out []string
	first := true
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if !first {
			out = append(out, "")
		}
		first = false
		out = append(out, r.block(n, width)...)
	}
	return out
}

// mdPart is a stretch of Markdown: text for the CommonMark parser, or a
// GFM table (rows of cell sources, the header first).
type mdPart struct {
	text  string
	table [][]string
}

// splitTables cuts the top-level GFM tables out of src: a row of cells
// followed by a delimiter row (|---|:--:|), then the rows up to a blank
// line or a line without a pipe. Code fences are left alone.
func splitTables(src string) []mdPart {
	lines := strings.Split(src, "\n")
	var parts []mdPart
	var cur []string
	fence := ""
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, mdPart{text: strings.Join(cur, "\n")})
			cur = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimLeft(l, " ")
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]+" ") == "" {
				fence = ""
			}
			cur = append(cur, l)
			continue
		}
		if len(l)-len(t) <= 3 && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
			n := len(t) - len(strings.TrimLeft(t, t[:1]))
			fence = strings.Repeat(t[:1], n)
			cur = append(cur, l)
			continue
		}
		if i+1 < len(lines) && strings.Contains(l, "|") && isDelimiterRow(lines[i+1]) {
			header := tableCells(l)
			if len(header) == len(tableCells(lines[i+1])) {
				flush()
				rows := [][]string{header}
				i += 2
				for ; i < len(lines) && strings.Contains(lines[i], "|") && strings.TrimSpace(lines[i]) != ""; i++ {
					rows = append(rows, tableCells(lines[i]))
				}
				i--
				parts = append(parts, mdPart{table: rows})
				continue
			}
		}
		cur = append(cur, l)
	}
	flush()
	return parts
}

// tableCells splits a table row at its unescaped pipes (the outer ones
// optional).
func tableCells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, "\\|") {
		row = row[:len(row)-1]
	}
	var cells []string
	var b strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			b.WriteByte('|')
			i++
		case row[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(row[i])
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

// isDelimiterRow reports a GFM delimiter row: cells of dashes with optional
// colons at either end.
func isDelimiterRow(l string) bool {
	if !strings.Contains(l, "-") {
		return false
	}
	for _, c := range tableCells(l) {
		c = strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return true
}

type mdRenderer struct {
	src []byte
	th  *Theme
}

// wrap breaks styled text at width (words first, long words hard).
func wrap(s string, width int) []string {
	if s == "" {
		return []string{""}
	}
	return strings.Split(ansi.Wrap(s, width, ""), "\n")
}

func (r *mdRenderer) block(n gast.Node, width int) []string {
	switch n := n.(type) {
	case *gast.Heading:
		s := r.th.Heading.Render(strings.Repeat("#", n.Level) + " " + ansi.Strip(r.inline(n)))
		return wrap(s, width)
	case *gast.Paragraph, *gast.TextBlock:
		return wrap(r.inline(n), width)
	case *gast.ThematicBreak:
		return []string{r.th.Muted.Render(strings.Repeat("─", width))}
	case *gast.FencedCodeBlock:
		lang := string(n.Language(r.src))
		out := []string{r.th.Muted.Render("```" + lang)}
		out = append(out, r.code(n.Lines(), lang, width)...)
		return append(out, r.th.Muted.Render("```"))
	case *gast.CodeBlock:
		return r.code(n.Lines(), "", width)
	case *gast.Blockquote:
		var out []string
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if c != n.FirstChild() {
				out = append(out, "")
			}
			for _, l := range r.block(c, width-2) {
				out = append(out, r.th.Quote.Render("│ ")+r.th.Quote.Render(l))
			}
		}
		return out
	case *gast.List:
		return r.list(n, width)
	case *gast.HTMLBlock:
		var b strings.Builder
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			b.Write(seg.Value(r.src))
		}
		return wrap(strings.TrimRight(b.String(), "\n"), width)
	}
	// Anything else: its children as blocks.
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		out = append(out, r.block(c, width)...)
	}
	return out
}

func (r *mdRenderer) list(n *gast.List, width int) []string {
	var out []string
	num := n.Start
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		marker := "- "
		if n.IsOrdered() {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		mw := ansi.StringWidth(marker)
		var body []string
		for c := item.FirstChild(); c != nil; c = c.NextSibling() {
			if c != item.FirstChild() && !n.IsTight {
				body = append(body, "")
			}
			body = append(body, r.block(c, width-mw)...)
		}
		if len(body) == 0 {
			body = []string{""}
		}
		for i, l := range body {
			if i == 0 {
				out = append(out, r.th.Accent.Render(marker)+l)
			} else {
				out = append(out, strings.Repeat(" ", mw)+l)
			}
		}
		if !n.IsTight && item.NextSibling() != nil {
			out = append(out, "")
		}
	}
	return out
}

func (r *mdRenderer) code(lines *text.Segments, lang string, width int) []string {
	var out []string
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		line := strings.TrimRight(string(seg.Value(r.src)), "\n")
		line = strings.ReplaceAll(line, "\t", "    ")
		styled := highlight(line, lang, r.th)
		out = append(out, strings.Split(ansi.Hardwrap("  "+styled, width, true), "\n")...)
	}
	return out
}

// renderTable draws a table whose cells are inline Markdown, shrinking the
// widest columns (their cells wrap) until it fits width.
func renderTable(rows [][]string, width int, th *Theme) []string {
	header := 1
	r := &mdRenderer{th: th}
	for i, row := range rows {
		for j, cell := range row {
			rows[i][j] = r.inlineSource(cell)
		}
	}
	cols := 0
	for _, row := range rows {
		cols = max(cols, len(row))
	}
	if cols == 0 {
		return nil
	}
	widths := make([]int, cols)
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], ansi.StringWidth(cell))
		}
	}
	// Borders take 3 columns per cell plus one; shrink the widest columns
	// until the table fits.
	avail := width - (3*cols + 1)
	for {
		total := 0
		widest := 0
		for i, w := range widths {
			total += w
			if w > widths[widest] {
				widest = i
			}
		}
		if total <= avail || widths[widest] <= 3 {
			break
		}
		widths[widest]--
	}
	rule := func(l, m, rr string) string {
		var b strings.Builder
		b.WriteString(l)
		for i, w := range widths {
			b.WriteString(strings.Repeat("─", w+2))
			if i < cols-1 {
				b.WriteString(m)
			}
		}
		b.WriteString(rr)
		return th.Muted.Render(b.String())
	}
	bar := th.Muted.Render("│")
	out := []string{rule("┌", "┬", "┐")}
	for ri, row := range rows {
		wrapped := make([][]string, cols)
		height := 1
		for i := range cols {
			cell := ""
			if i < len(row) {
				cell = row[i]
			}
			if ri < header {
				cell = th.Bold.Render(ansi.Strip(cell))
			}
			wrapped[i] = wrap(cell, widths[i])
			height = max(height, len(wrapped[i]))
		}
		for h := range height {
			var b strings.Builder
			b.WriteString(bar)
			for i := range cols {
				s := ""
				if h < len(wrapped[i]) {
					s = wrapped[i][h]
				}
				b.WriteString(" " + s + strings.Repeat(" ", max(0, widths[i]-ansi.StringWidth(s))) + " ")
				b.WriteString(bar)
			}
			out = append(out, b.String())
		}
		if ri == header-1 && ri < len(rows)-1 {
			out = append(out, rule("├", "┼", "┤"))
		}
	}
	return append(out, rule("└", "┴", "┘"))
}

// inlineSource renders a piece of inline Markdown (a table cell).
func (r *mdRenderer) inlineSource(src string) string {
	source := []byte(src)
	doc := markdownParser().Parser().Parse(text.NewReader(source))
	sub := &mdRenderer{src: source, th: r.th}
	var parts []string
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		parts = append(parts, sub.inline(n))
	}
	return strings.Join(parts, " ")
}

// strike styles ~~text~~ (GFM strikethrough) within one run of text.
func (r *mdRenderer) strike(s string) string {
	for {
		i := strings.Index(s, "~~")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i+2:], "~~")
		if j <= 0 {
			return s
		}
		s = s[:i] + r.th.Strike.Render(s[i+2:i+2+j]) + s[i+2+j+2:]
	}
}

// inline renders the inline children of n as one styled string ("\n" at
// hard line breaks).
func (r *mdRenderer) inline(n gast.Node) string {
	var b strings.Builder
	r.inlineInto(&b, n)
	return b.String()
}

func (r *mdRenderer) inlineInto(b *strings.Builder, n gast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *gast.Text:
			b.WriteString(r.strike(string(c.Value(r.src))))
			switch {
			case c.HardLineBreak():
				b.WriteByte('\n')
			case c.SoftLineBreak():
				b.WriteByte(' ')
			}
		case *gast.String:
			b.Write(c.Value)
		case *gast.CodeSpan:
			var s strings.Builder
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if tx, ok := t.(*gast.Text); ok {
					s.Write(tx.Value(r.src))
				}
			}
			b.WriteString(r.th.Code.Render(s.String()))
		case *gast.Emphasis:
			st := r.th.Italic
			if c.Level >= 2 {
				st = r.th.Bold
			}
			b.WriteString(st.Render(r.inline(c)))
		case *gast.Link:
			label := r.inline(c)
			dest := string(c.Destination)
			b.WriteString(r.th.Link.Render(ansi.Strip(label)))
			if dest != "" && dest != ansi.Strip(label) {
				b.WriteString(r.th.Dim.Render(" (" + dest + ")"))
			}
		case *gast.AutoLink:
			b.WriteString(r.th.Link.Render(string(c.URL(r.src))))
		case *gast.Image:
			b.WriteString(r.th.Dim.Render("[image: " + ansi.Strip(r.inline(c)) + "]"))
		case *gast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				b.Write(seg.Value(r.src))
			}
		default:
			r.inlineInto(b, c)
		}
	}
}
