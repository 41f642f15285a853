package tui

import (
	"encoding/json"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

// themeJSON is a complete theme file: every token "dim" except those set.
func themeJSON(name string, set map[string]any) string {
	colors := map[string]any{}
	for _, t := range themeTokens {
		colors[t] = "dim"
	}
	for k, v := range set {
		colors[k] = v
	}
	b, _ := json.Marshal(map[string]any{"name": name, "vars": map[string]any{"dim": 242, "primary": "#00aaff", "alias": "primary"}, "colors": colors})
	return string(b)
}

func sameColor(a, b color.Color) bool {
	if a == nil || b == nil {
		return a == b
	}
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

func TestThemeFile(t *testing.T) {
	th, err := parseTheme([]byte(themeJSON("mine", map[string]any{"accent": "alias", "error": "#ff0000", "userMessageBg": "#f0f0f0", "text": ""})))
	if err != nil {
		t.Fatal(err)
	}
	if th.Name != "mine" || !th.light {
		t.Errorf("name %q light %v", th.Name, th.light)
	}
	if got := th.Accent.GetForeground(); !sameColor(got, lipgloss.Color("#00aaff")) {
		t.Errorf("accent %v: want the variable's colour through another variable", got)
	}
	if got := th.Error.GetForeground(); !sameColor(got, lipgloss.Color("#ff0000")) {
		t.Errorf("error %v", got)
	}
	if got := th.Dim.GetForeground(); !sameColor(got, lipgloss.ANSIColor(242)) {
		t.Errorf("dim %v: want 256-colour 242", got)
	}

	bad := []struct{ file, want string }{
		{`{"colors": {}}`, `no "name"`},
		{`{"name": "x", "colors": {"accent": "#fff"}}`, "lacks border, borderAccent"},
		{themeJSON("x", map[string]any{"accent": "#12345"}), `colors.accent: "#12345" is not a #rrggbb colour`},
		{themeJSON("x", map[string]any{"accent": 300}), "colors.accent: 300 is not a 256-colour index"},
		{themeJSON("x", map[string]any{"accent": "nowhere"}), `colors.accent: "nowhere" is neither a colour nor one of vars`},
	}
	for _, c := range bad {
		if _, err := parseTheme([]byte(c.file)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60s: err %v, want %q", c.file, err, c.want)
		}
	}
}

// Theme files of a folder and given files are chosen by name; a broken
// file is reported and skipped; an unknown name lists the themes.
func TestDiscoverThemes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("a.json", themeJSON("nord", nil))
	write("broken.json", `{"name": "broken"`)
	extra := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(extra, []byte(themeJSON("gruvbox", nil)), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := DiscoverThemes([]string{dir, filepath.Join(dir, "missing")}, []string{extra})
	if len(ts.Problems) != 1 || !strings.Contains(ts.Problems[0].Error(), "broken.json") {
		t.Errorf("problems %v", ts.Problems)
	}
	for _, n := range []string{"dark", "light", "nord", "gruvbox"} {
		if th, err := ts.Get(n); err != nil || th.Name != n {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := ts.Get("solarized"); err == nil || !strings.Contains(err.Error(), "dark, gruvbox, light, nord") {
		t.Errorf("unknown theme: %v", err)
	}
}
