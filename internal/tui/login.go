package tui

import (
	"context"
	"errors"
	"strings"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/models"
)

// loginView is a subscription login running in place of the editor: what
// the flow showed (the address to open, a device code), and a text field
// while the flow waits for a pasted code or address.
type loginView struct {
	id, name string
	lines    []string // instructions, in order
	urls     map[int]bool
	question string // "" while nothing is asked
	answer   chan string
	input    textarea.Model
	cancel   context.CancelFunc
	ctx      context.Context
	events   chan tea.Msg
}

// loginEventMsg is a step of a login flow (shown, asked); loginDoneMsg its
// end.
type loginEventMsg struct {
	v        *loginView
	text     string
	url      bool
	question string
	answer   chan string
}

type loginDoneMsg struct {
	v   *loginView
	err error
}

// next waits for the flow's next step (a tea.Cmd).
func (v *loginView) next() tea.Msg { return <-v.events }

// post hands a step to the UI unless the flow was cancelled.
func (v *loginView) post(msg tea.Msg) bool {
	select {
	case v.events <- msg:
		return true
	case <-v.ctx.Done():
		return false
	}
}

func (m *Model) cmdLogin(args string) tea.Cmd {
	store := m.sess.Models().Auth()
	if store == nil {
		m.notify("Logins need an agent directory (auth.json)", true)
		return nil
	}
	if id := strings.TrimSpace(args); id != "" {
		p, ok := auth.Lookup(id)
		if !ok {
			m.notify("No subscription login for "+id, true)
			return nil
		}
		return m.startLogin(store, p)
	}
	p := &picker{title: "Select provider to log in", rows: 8}
	for _, lp := range auth.Providers() {
		p.items = append(p.items, item{label: lp.Name(), desc: lp.ID(), value: lp})
	}
	p.onSelect = func(m *Model, it item) tea.Cmd { return m.startLogin(store, it.value.(auth.Provider)) }
	m.overlay = p
	return nil
}

// startLogin runs provider's login flow off the UI goroutine; its steps
// come back as messages.
func (m *Model) startLogin(store *auth.Store, p auth.Provider) tea.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	v := &loginView{id: p.ID(), name: p.Name(), urls: map[int]bool{}, ctx: ctx, cancel: cancel,
		events: make(chan tea.Msg, 8)}
	open := m.opts.OpenURL
	ui := &auth.LoginUI{
		OpenURL: func(u string) {
			if v.post(loginEventMsg{v: v, text: u, url: true}) && open != nil {
				open(u)
			}
		},
		Show: func(msg string) { v.post(loginEventMsg{v: v, text: msg}) },
		Prompt: func(ctx context.Context, q string) (string, error) {
			ans := make(chan string, 1)
			if !v.post(loginEventMsg{v: v, question: q, answer: ans}) {
				return "", v.ctx.Err()
			}
			select {
			case a := <-ans:
				return a, nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		},
	}
	m.login = v
	go func() {
		_, err := store.Login(ctx, p.ID(), ui)
		// Always delivered: the UI reads until this message.
		v.events <- loginDoneMsg{v: v, err: err}
	}()
	return v.next
}

// loginEvent applies a step of a login flow.
func (m *Model) loginEvent(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case loginEventMsg:
		v := msg.v
		switch {
		case msg.answer != nil:
			v.question, v.answer = msg.question, msg.answer
			v.input = newEditor(m.th)
			bindEditor(&v.input, m.keys)
			v.input.SetWidth(m.width)
		case msg.url:
			v.urls[len(v.lines)+1] = true
			v.lines = append(v.lines, "Open this address to log in:", msg.text)
		default:
			v.lines = append(v.lines, msg.text)
		}
		return v.next
	case loginDoneMsg:
		v := msg.v
		v.cancel()
		if m.login == v {
			m.login = nil
		}
		switch {
		case errors.Is(msg.err, context.Canceled):
			m.notify("Login cancelled", false)
		case msg.err != nil:
			m.notify("Login to "+v.name+" failed: "+msg.err.Error(), true)
		default:
			m.info("Logged in to " + v.name + "; the login is saved in " + models.HomeRelative(m.sess.Models().AuthFile()))
			m.notice = ""
			// The account may use other models than the catalogue's all.
			m.sess.Models().Rebuild(v.id)
			m.afterLogin(v.id)
		}
	}
	return nil
}

// afterLogin gives a session without a model the first model of the
// provider just logged in to.
func (m *Model) afterLogin(provider string) {
	if m.sess.Model() != nil {
		return
	}
	for _, mod := range m.sess.Models().Available() {
		if mod.Provider == provider {
			m.setModel(mod.Provider, mod.ID)
			return
		}
	}
}

// loginKey drives the login view: escape cancels; enter answers the
// question asked.
func (m *Model) loginKey(k string, msg tea.KeyPressMsg) tea.Cmd {
	v := m.login
	if m.keys.is(k, actSelectCancel) {
		v.cancel()
		m.login = nil
		return nil
	}
	if v.answer == nil {
		return nil
	}
	if m.keys.is(k, actSubmit) {
		v.answer <- strings.TrimSpace(v.input.Value())
		v.answer, v.question = nil, ""
		return nil
	}
	var cmd tea.Cmd
	v.input, cmd = v.input.Update(msg)
	return cmd
}

// render draws the login view; inputRow is the row of its text field (-1:
// none). Addresses are cut at the width, not at words, each piece a link
// to the whole address, so that a click opens it where the terminal
// supports links.
func (v *loginView) render(width int, th *Theme) (out []string, inputRow int) {
	inputRow = -1
	out = append(out, th.Accent.Bold(true).Render(ansi.Truncate("Log in to "+v.name, width, "…")))
	for i, l := range v.lines {
		if v.urls[i] {
			for _, piece := range strings.Split(ansi.Hardwrap(l, width, false), "\n") {
				out = append(out, ansi.SetHyperlink(l)+th.Accent.Render(piece)+ansi.ResetHyperlink())
			}
			continue
		}
		out = append(out, wrap(l, width)...)
	}
	if v.answer != nil {
		out = append(out, wrap(v.question, width)...)
		inputRow = len(out)
		out = append(out, strings.Split(v.input.View(), "\n")...)
		out = append(out, th.Dim.Render("enter submits · escape cancels"))
	} else {
		out = append(out, th.Dim.Render("Waiting for the login… escape cancels"))
	}
	return out, inputRow
}

func (m *Model) cmdLogout(args string) tea.Cmd {
	store := m.sess.Models().Auth()
	if store == nil {
		m.notify("Nothing to log out of (no auth.json)", true)
		return nil
	}
	logout := func(m *Model, id string) tea.Cmd {
		return func() tea.Msg {
			had, err := store.Delete(context.Background(), id)
			return resultMsg{err: err, after: func(m *Model) tea.Cmd {
				switch {
				case err != nil:
				case had:
					m.sess.Models().Rebuild(id)
					m.info("Logged out of " + id)
				default:
					m.notify("Nothing stored for "+id, false)
				}
				return nil
			}}
		}
	}
	if id := strings.TrimSpace(args); id != "" {
		return logout(m, id)
	}
	names, err := store.Names(context.Background())
	if err != nil {
		m.notify(err.Error(), true)
		return nil
	}
	p := &picker{title: "Select provider to log out", rows: 8}
	for _, n := range names {
		c, err := store.Get(context.Background(), n)
		if err != nil || !c.IsOAuth() {
			continue
		}
		label := n
		if lp, ok := auth.Lookup(n); ok {
			label = lp.Name()
		}
		p.items = append(p.items, item{label: label, desc: n, value: n})
	}
	if len(p.items) == 0 {
		m.notify("No subscription logins stored (/login logs in)", false)
		return nil
	}
	p.onSelect = func(m *Model, it item) tea.Cmd { return logout(m, it.value.(string)) }
	m.overlay = p
	return nil
}
