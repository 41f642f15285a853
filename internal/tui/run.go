package tui

import (
	"context"
	"fmt"
	"io"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// Run shows the UI on the terminal of in and out until the user quits or
// ctx ends, then prints the transcript on the main screen (fullscreen
// mode) and the command that resumes the session.
func Run(ctx context.Context, opts Options, bridge *Bridge, in io.Reader, out io.Writer) error {
	m := New(opts)
	defer m.Close()
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	if bridge != nil {
		bridge.Connect(p.Send)
		defer bridge.Connect(nil)
	}
	_, err := p.Run()
	if err != nil && ctx.Err() == nil {
		return err
	}
	w := colorprofile.NewWriter(out, os.Environ())
	width := m.width
	if opts.Inline {
		// The scrollback has what was finished; the rest follows.
		for _, l := range m.toPrint {
			fmt.Fprintln(w, l)
		}
		for _, b := range m.blocks[m.printed:] {
			fmt.Fprintln(w)
			for _, l := range b.render(width, m.th, m.expanded, m.showThinking) {
				fmt.Fprintln(w, l)
			}
		}
	} else if t := m.Transcript(width); t != "" {
		fmt.Fprintln(w, t)
	}
	if !m.InMemory() {
		fmt.Fprintf(w, "\nTo resume this session: %s --session %s\n", m.opts.Program, m.SessionID())
	}
	return nil
}
