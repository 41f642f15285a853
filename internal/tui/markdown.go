package tui

import (
	"strconv"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// The Markdown parser is built on first use: nothing of it runs at start-up
// in the modes that never render Markdown.
var (
	mdOnce   sync.Once
	mdParser goldmark.Markdown
)

func markdownParser() goldmark.Markdown {
	mdOnce.Do(func() {
		mdParser = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough))
	})
	return mdParser
}

// renderMarkdown renders Markdown source as styled terminal lines no wider
// than width. Unfinished source (a reply still streaming) renders as far as
// it goes: an unclosed code fence runs to the end.
func renderMarkdown(src string, width int, th *Theme) []string {
	if width < 4 {
		width = 4
	}
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
	case *east.Table:
		return r.table(n, width)
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

func (r *mdRenderer) table(t *east.Table, width int) []string {
	var rows [][]string
	header := 0
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		if _, ok := row.(*east.TableHeader); ok {
			header = 1
		}
		var cells []string
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, r.inline(c))
		}
		rows = append(rows, cells)
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
		return r.th.Muted.Render(b.String())
	}
	bar := r.th.Muted.Render("│")
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
				cell = r.th.Bold.Render(ansi.Strip(cell))
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
			b.Write(c.Value(r.src))
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
		case *east.Strikethrough:
			b.WriteString(r.th.Strike.Render(r.inline(c)))
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
