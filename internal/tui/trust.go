package tui

import (
	"context"
	"io"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/pisces-agent/pisces/internal/resources"
)

// trustModel is the screen of the project trust question, shown before the
// session is built (its answer decides which settings, extensions and
// resources it loads): the start header and the question as the UI's
// confirm dialog.
type trustModel struct {
	th       *Theme
	keys     *Keymap
	version  string
	inline   bool
	width    int
	d        *dialog
	answer   bool
	answered bool
}

func (t *trustModel) Init() tea.Cmd { return nil }

func (t *trustModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		t.width = max(msg.Width, 20)
	case tea.KeyPressMsg:
		k := msg.String()
		switch {
		case t.keys.is(k, actSelectCancel):
			return t, tea.Quit
		case t.keys.is(k, actSelectUp):
			t.d.list.move(-1)
		case t.keys.is(k, actSelectDown):
			t.d.list.move(1)
		case t.keys.is(k, actSelectOK):
			if it, ok := t.d.list.current(); ok {
				t.answer, t.answered = it.value.(bool), true
			}
			return t, tea.Quit
		}
	}
	return t, nil
}

func (t *trustModel) View() tea.View {
	rule := t.th.Muted.Render(strings.Repeat("─", t.width))
	lines := append([]string{
		t.th.Accent.Bold(true).Render("pisces") + t.th.Dim.Render(" v"+t.version), "",
	}, rule)
	body, _ := t.d.render(t.width, t.th)
	lines = append(lines, body...)
	lines = append(lines, rule, t.th.Dim.Render("enter answers · escape: not now (asked again next time)"))
	v := tea.NewView(strings.Join(lines, "\n"))
	v.AltScreen = !t.inline
	return v
}

// TrustAsker returns the project trust question asked in a screen of the
// UI on the terminal of in and out (resources.TrustAsk): yes or no is an
// answer (remembered by the caller); escape, ctrl+c or an ended input is
// none (the project is not trusted in this run).
func TrustAsker(in io.Reader, out io.Writer, th *Theme, keys *Keymap, version string, inline bool) resources.TrustAsk {
	return func(ctx context.Context, project string) (bool, bool) {
		if th == nil {
			th, _ = ThemeByName("")
		}
		if keys == nil {
			keys, _ = LoadKeymap("")
		}
		title, message := resources.TrustQuestion(project)
		t := &trustModel{th: th, keys: keys, version: version, inline: inline, width: 80,
			d: &dialog{method: "confirm", title: title, body: message,
				list: &picker{rows: 2, items: []item{{label: "Yes", value: true}, {label: "No", value: false}}}}}
		p := tea.NewProgram(t, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
		if _, err := p.Run(); err != nil {
			return false, false
		}
		return t.answer, t.answered
	}
}
