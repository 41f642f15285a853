package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
)

// themeTokens are the colours a pi theme file must define, in pi's
// order.
var themeTokens = []string{
	"accent", "border", "borderAccent", "borderMuted", "success", "error", "warning", "muted", "dim", "text", "thinkingText",
	"selectedBg", "userMessageBg", "userMessageText", "customMessageBg", "customMessageText", "customMessageLabel",
	"toolPendingBg", "toolSuccessBg", "toolErrorBg", "toolTitle", "toolOutput",
	"mdHeading", "mdLink", "mdLinkUrl", "mdCode", "mdCodeBlock", "mdCodeBlockBorder", "mdQuote", "mdQuoteBorder", "mdHr", "mdListBullet",
	"toolDiffAdded", "toolDiffRemoved", "toolDiffContext",
	"syntaxComment", "syntaxKeyword", "syntaxFunction", "syntaxVariable", "syntaxString", "syntaxNumber", "syntaxType", "syntaxOperator", "syntaxPunctuation",
	"thinkingOff", "thinkingMinimal", "thinkingLow", "thinkingMedium", "thinkingHigh", "thinkingXhigh",
	"bashMode",
}

// themeFile is a pi theme file: a name, optional variables, and every
// token's colour ("#rrggbb", a 256-colour index, a variable's name, or ""
// for the terminal's own colour).
type themeFile struct {
	Name   string                     `json:"name"`
	Vars   map[string]json.RawMessage `json:"vars"`
	Colors map[string]json.RawMessage `json:"colors"`
}

// LoadThemeFile reads a pi theme file.
func LoadThemeFile(path string) (*Theme, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	th, err := parseTheme(b)
	if err != nil {
		return nil, fmt.Errorf("theme %s: %v", path, err)
	}
	return th, nil
}

func parseTheme(b []byte) (*Theme, error) {
	var f themeFile
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if strings.TrimSpace(f.Name) == "" {
		return nil, fmt.Errorf(`no "name"`)
	}
	var missing []string
	for _, t := range themeTokens {
		if _, ok := f.Colors[t]; !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("colors lacks %s (a theme defines all %d tokens)", strings.Join(missing, ", "), len(themeTokens))
	}
	cols := map[string]color.Color{}
	for _, t := range themeTokens {
		c, err := f.color(f.Colors[t], 0)
		if err != nil {
			return nil, fmt.Errorf("colors.%s: %v", t, err)
		}
		cols[t] = c
	}
	return themeFrom(f.Name, cols), nil
}

// color resolves a colour value (variables may name variables).
func (f *themeFile) color(raw json.RawMessage, depth int) (color.Color, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		i, err := strconv.Atoi(n.String())
		if err != nil || i < 0 || i > 255 {
			return nil, fmt.Errorf("%s is not a 256-colour index (0-255)", n)
		}
		return lipgloss.ANSIColor(i), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s is not a colour", raw)
	}
	switch {
	case s == "":
		return nil, nil // the terminal's colour
	case strings.HasPrefix(s, "#"):
		if len(s) != 7 {
			return nil, fmt.Errorf("%q is not a #rrggbb colour", s)
		}
		if _, err := strconv.ParseUint(s[1:], 16, 32); err != nil {
			return nil, fmt.Errorf("%q is not a #rrggbb colour", s)
		}
		return lipgloss.Color(s), nil
	}
	v, ok := f.Vars[s]
	if !ok {
		return nil, fmt.Errorf("%q is neither a colour nor one of vars", s)
	}
	if depth > 8 {
		return nil, fmt.Errorf("vars refer to each other in a loop at %q", s)
	}
	return f.color(v, depth+1)
}

// themeFrom builds the screen's styles from a theme file's colours.
func themeFrom(name string, c map[string]color.Color) *Theme {
	fg := func(t string) lipgloss.Style {
		st := lipgloss.NewStyle()
		if c[t] != nil {
			st = st.Foreground(c[t])
		}
		return st
	}
	user := fg("userMessageText")
	if c["userMessageBg"] != nil {
		user = user.Background(c["userMessageBg"])
	}
	return &Theme{
		Name:     name,
		light:    isLight(c["userMessageBg"]),
		Accent:   fg("accent"),
		Dim:      fg("dim"),
		Muted:    fg("borderMuted"),
		User:     user,
		Thinking: fg("thinkingText").Italic(true),
		Error:    fg("error"),
		Warning:  fg("warning"),
		Success:  fg("success"),
		ToolHead: fg("toolTitle").Bold(true),
		ToolOut:  fg("toolOutput"),
		Added:    fg("toolDiffAdded"),
		Removed:  fg("toolDiffRemoved"),
		Code:     fg("mdCode"),
		Keyword:  fg("syntaxKeyword"),
		String:   fg("syntaxString"),
		Comment:  fg("syntaxComment").Italic(true),
		Heading:  fg("mdHeading").Bold(true),
		Link:     fg("mdLink").Underline(true),
		Quote:    fg("mdQuote").Italic(true),
		Bold:     lipgloss.NewStyle().Bold(true),
		Italic:   lipgloss.NewStyle().Italic(true),
		Strike:   lipgloss.NewStyle().Strikethrough(true),
	}
}

// isLight tells a light background (the user message's) from a dark one.
func isLight(c color.Color) bool {
	if c == nil {
		return false
	}
	r, g, b, _ := c.RGBA()
	return (299*r+587*g+114*b)/1000 > 0x8000
}

// Themes are the themes a UI can choose by name: the built-in dark and
// light, then theme files.
type Themes struct {
	byName map[string]*Theme
	// Problems are the theme files that could not be read.
	Problems []error
}

// DiscoverThemes reads the *.json theme files of dirs (missing
// directories are skipped) and the files given. A file's theme replaces
// a same-named one read before it.
func DiscoverThemes(dirs, files []string) *Themes {
	ts := &Themes{byName: map[string]*Theme{}}
	for _, n := range []string{"dark", "light"} {
		ts.byName[n], _ = ThemeByName(n)
	}
	var paths []string
	for _, d := range dirs {
		ms, _ := filepath.Glob(filepath.Join(d, "*.json"))
		sort.Strings(ms)
		paths = append(paths, ms...)
	}
	paths = append(paths, files...)
	for _, p := range paths {
		th, err := LoadThemeFile(p)
		if err != nil {
			ts.Problems = append(ts.Problems, err)
			continue
		}
		ts.byName[th.Name] = th
	}
	return ts
}

// Get returns the theme called name.
func (ts *Themes) Get(name string) (*Theme, error) {
	if th := ts.byName[name]; th != nil {
		return th, nil
	}
	return nil, fmt.Errorf("unknown theme %q (themes: %s)", name, strings.Join(ts.Names(), ", "))
}

// Names lists the themes' names, sorted.
func (ts *Themes) Names() []string {
	var out []string
	for n := range ts.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
