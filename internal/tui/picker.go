package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// item is one row of a list.
type item struct {
	label  string
	desc   string
	indent int
	value  any
}

// picker is a filterable list: the slash menu, the model, thinking, tree,
// resume and fork selectors, and extension select dialogs.
type picker struct {
	title    string
	help     string
	items    []item
	filter   string
	search   bool // typing filters (shown as "Type to search:")
	selected int  // index into visible()
	rows     int  // rows shown at once
	files    bool // the file list of an @ word (enter and tab insert the path)
	onSelect func(m *Model, it item) tea.Cmd
	onCancel func(m *Model) tea.Cmd
	// onKey handles keys the list does not (tab in /resume); true when
	// handled.
	onKey func(m *Model, key string) (tea.Cmd, bool)
	// refresh rebuilds the items when what they show changed (the /mcp
	// list, as servers connect).
	refresh func(m *Model)
}

func (p *picker) visible() []item {
	if p.filter == "" {
		return p.items
	}
	words := strings.Fields(strings.ToLower(p.filter))
	var out []item
	for _, it := range p.items {
		hay := strings.ToLower(it.label + " " + it.desc)
		ok := true
		for _, w := range words {
			if !strings.Contains(hay, w) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, it)
		}
	}
	return out
}

func (p *picker) move(d int) {
	n := len(p.visible())
	if n == 0 {
		p.selected = 0
		return
	}
	p.selected = (p.selected + d + n) % n
}

func (p *picker) current() (item, bool) {
	v := p.visible()
	if p.selected < 0 || p.selected >= len(v) {
		return item{}, false
	}
	return v[p.selected], true
}

func (p *picker) setFilter(f string) {
	p.filter = f
	p.selected = 0
}

// render draws the list: title, search line, rows around the selection
// (a → marks it), and the (i/N) counter.
func (p *picker) render(width int, th *Theme) []string {
	var out []string
	if p.title != "" {
		out = append(out, th.Accent.Bold(true).Render(ansi.Truncate(p.title, width, "…")))
	}
	if p.help != "" {
		out = append(out, wrap(th.Dim.Render(p.help), width)...)
	}
	if p.search {
		out = append(out, th.Dim.Render("Type to search: ")+p.filter)
	}
	v := p.visible()
	rows := p.rows
	if rows <= 0 {
		rows = 5
	}
	start := 0
	if p.selected >= rows {
		start = p.selected - rows + 1
	}
	end := min(len(v), start+rows)
	nameW := 0
	for _, it := range v[start:end] {
		nameW = max(nameW, ansi.StringWidth(it.label)+it.indent)
	}
	nameW = min(nameW, width/2)
	for i := start; i < end; i++ {
		it := v[i]
		marker := "  "
		if i == p.selected {
			marker = "→ "
		}
		label := strings.Repeat(" ", it.indent) + it.label
		line := marker + label
		if it.desc != "" {
			pad := max(1, nameW-ansi.StringWidth(label)+2)
			line += strings.Repeat(" ", pad) + th.Dim.Render(it.desc)
		}
		line = ansi.Truncate(line, width, "…")
		if i == p.selected {
			line = th.Accent.Render(ansi.Strip(line))
		}
		out = append(out, line)
	}
	if len(v) == 0 {
		out = append(out, th.Dim.Render("  (no matches)"))
	} else {
		out = append(out, th.Dim.Render(fmt.Sprintf("  (%d/%d)", p.selected+1, len(v))))
	}
	return out
}
