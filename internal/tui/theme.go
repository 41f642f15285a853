package tui

import (
	"fmt"
	"image/color"

	"charm.land/lipgloss/v2"
)

// Theme is the palette of the screen. The built-in ones are pi's names,
// "dark" (the default) and "light"; colours are written in 24-bit and the
// program lowers them to what the terminal supports (256 or 16 colours,
// none under NO_COLOR).
type Theme struct {
	Name string
	// light: drawn for a light background.
	light bool

	Accent   lipgloss.Style // the selection, the prompt marker, headings
	Dim      lipgloss.Style // hints, the footer, durations
	Muted    lipgloss.Style // the rules around the editor
	User     lipgloss.Style // the user's messages (background block)
	Thinking lipgloss.Style
	Error    lipgloss.Style
	Warning  lipgloss.Style
	Success  lipgloss.Style
	ToolHead lipgloss.Style // `$ command`, the tool name
	ToolOut  lipgloss.Style
	Added    lipgloss.Style // diff lines
	Removed  lipgloss.Style
	Code     lipgloss.Style // code blocks and inline code
	Keyword  lipgloss.Style // code highlighting
	String   lipgloss.Style
	Comment  lipgloss.Style
	Heading  lipgloss.Style
	Link     lipgloss.Style
	Quote    lipgloss.Style
	Bold     lipgloss.Style
	Italic   lipgloss.Style
	Strike   lipgloss.Style
}

func c(hex string) color.Color { return lipgloss.Color(hex) }

// ThemeByName returns a built-in theme: "dark" or "light" ("" is dark).
func ThemeByName(name string) (*Theme, error) {
	switch name {
	case "", "dark":
		return newTheme("dark", palette{
			accent: "#8abeb7", dim: "#808080", muted: "#505050", userBg: "#343541",
			thinking: "#a0a0a0", err: "#cc6666", warn: "#ffff00", ok: "#b5bd68",
			tool: "#81a2be", added: "#b5bd68", removed: "#cc6666", code: "#8abeb7",
			keyword: "#b294bb", str: "#b5bd68", comment: "#6a9955", heading: "#f0c674",
			link: "#81a2be",
		}), nil
	case "light":
		return newTheme("light", palette{
			accent: "#5a8080", dim: "#767676", muted: "#b0b0b0", userBg: "#e8e8e8",
			thinking: "#6c6c6c", err: "#aa5555", warn: "#9a7326", ok: "#588458",
			tool: "#547da7", added: "#588458", removed: "#aa5555", code: "#5a8080",
			keyword: "#7e4e9e", str: "#588458", comment: "#6a7a6a", heading: "#9a7326",
			link: "#547da7",
		}), nil
	}
	return nil, fmt.Errorf("unknown theme %q (built-in themes: dark, light)", name)
}

type palette struct {
	accent, dim, muted, userBg, thinking, err, warn, ok, tool, added, removed string
	code, keyword, str, comment, heading, link                                string
}

func newTheme(name string, p palette) *Theme {
	s := lipgloss.NewStyle
	return &Theme{
		Name:     name,
		light:    name == "light",
		Accent:   s().Foreground(c(p.accent)),
		Dim:      s().Foreground(c(p.dim)),
		Muted:    s().Foreground(c(p.muted)),
		User:     s().Background(c(p.userBg)),
		Thinking: s().Foreground(c(p.thinking)).Italic(true),
		Error:    s().Foreground(c(p.err)),
		Warning:  s().Foreground(c(p.warn)),
		Success:  s().Foreground(c(p.ok)),
		ToolHead: s().Foreground(c(p.tool)).Bold(true),
		ToolOut:  s().Foreground(c(p.dim)),
		Added:    s().Foreground(c(p.added)),
		Removed:  s().Foreground(c(p.removed)),
		Code:     s().Foreground(c(p.code)),
		Keyword:  s().Foreground(c(p.keyword)),
		String:   s().Foreground(c(p.str)),
		Comment:  s().Foreground(c(p.comment)).Italic(true),
		Heading:  s().Foreground(c(p.heading)).Bold(true),
		Link:     s().Foreground(c(p.link)).Underline(true),
		Quote:    s().Foreground(c(p.dim)).Italic(true),
		Bold:     s().Bold(true),
		Italic:   s().Italic(true),
		Strike:   s().Strikethrough(true),
	}
}
