package tui

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/resources"
)

// Bridge is the extension UI and the trust question of the sessions the UI
// shows: requests become native dialogs, notices, status entries and
// widgets on the screen.
type Bridge struct {
	mu   sync.Mutex
	send func(tea.Msg)
}

// NewBridge returns a bridge that answers nothing until Connect.
func NewBridge() *Bridge { return &Bridge{} }

// Connect gives the bridge the program's Send.
func (b *Bridge) Connect(send func(tea.Msg)) {
	b.mu.Lock()
	b.send = send
	b.mu.Unlock()
}

func (b *Bridge) sender() func(tea.Msg) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.send
}

// dialogMsg asks the UI to show a dialog (or a notice when reply is nil).
type dialogMsg struct {
	method string
	params map[string]any
	reply  chan extensions.UIResponse
}

// Dialog shows select, confirm, input or editor and waits for the answer.
func (b *Bridge) Dialog(ctx context.Context, method string, params map[string]any, timeout time.Duration) extensions.UIResponse {
	send := b.sender()
	if send == nil {
		return extensions.UIResponse{Cancelled: true}
	}
	reply := make(chan extensions.UIResponse, 1)
	go send(dialogMsg{method: method, params: params, reply: reply})
	var tc <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	select {
	case r := <-reply:
		return r
	case <-ctx.Done():
	case <-tc:
	}
	go send(dialogMsg{method: "close", reply: reply})
	return extensions.UIResponse{Cancelled: true}
}

// Notify shows notify, setStatus, setWidget, setTitle or set_editor_text.
func (b *Bridge) Notify(method string, params map[string]any) {
	if send := b.sender(); send != nil {
		go send(dialogMsg{method: method, params: params})
	}
}

// Available is true: someone sits at the terminal.
func (b *Bridge) Available() bool { return b.sender() != nil }

// AskTrust asks the project trust question in the UI.
func (b *Bridge) AskTrust(ctx context.Context, project string) (answer, answered bool) {
	title, message := resources.TrustQuestion(project)
	r := b.Dialog(ctx, "confirm", map[string]any{"title": title, "message": message}, 0)
	if r.Cancelled || r.Confirmed == nil {
		return false, false
	}
	return *r.Confirmed, true
}

// ask opens an input dialog of the UI itself; done runs with the answer
// (not when cancelled).
func (m *Model) ask(title, prefill string, done func(m *Model, answer string) tea.Cmd) tea.Cmd {
	reply := make(chan extensions.UIResponse, 1)
	m.openDialog(dialogMsg{method: "input", params: map[string]any{"title": title, "prefill": prefill}, reply: reply})
	return func() tea.Msg {
		r := <-reply
		if r.Cancelled || r.Value == nil {
			return nil
		}
		v := *r.Value
		return resultMsg{after: func(m *Model) tea.Cmd { return done(m, v) }}
	}
}

// dialog is an open extension dialog.
type dialog struct {
	method string
	title  string
	body   string
	list   *picker
	input  textarea.Model
	reply  chan extensions.UIResponse
}

func str(params map[string]any, k string) string {
	s, _ := params[k].(string)
	return s
}

// openDialog handles a request of the bridge.
func (m *Model) openDialog(d dialogMsg) {
	p := d.params
	switch d.method {
	case "close":
		if m.dialog != nil && m.dialog.reply == d.reply {
			m.dialog = nil
		}
		return
	case "notify":
		isErr := str(p, "notifyType") == "error"
		m.notify(str(p, "message"), isErr)
		return
	case "setStatus":
		if m.statuses == nil {
			m.statuses = map[string]string{}
		}
		if t := str(p, "statusText"); t != "" {
			m.statuses[str(p, "statusKey")] = t
		} else {
			delete(m.statuses, str(p, "statusKey"))
		}
		return
	case "setWidget":
		if m.widgets == nil {
			m.widgets = map[string][]string{}
		}
		key := str(p, "widgetKey")
		lines, ok := p["widgetLines"].([]any)
		if !ok {
			if ls, ok2 := p["widgetLines"].([]string); ok2 {
				for _, l := range ls {
					lines = append(lines, l)
				}
				ok = true
			}
		}
		if !ok {
			delete(m.widgets, key)
			return
		}
		var ls []string
		for _, l := range lines {
			ls = append(ls, fmt.Sprint(l))
		}
		m.widgets[key] = ls
		return
	case "setTitle":
		m.title = str(p, "title")
		return
	case "set_editor_text":
		m.editor.SetValue(str(p, "text"))
		return
	}
	if d.reply == nil {
		return
	}
	if m.dialog != nil {
		// One dialog at a time: the one open is cancelled.
		m.dialog.reply <- extensions.UIResponse{Cancelled: true}
	}
	dl := &dialog{method: d.method, title: str(p, "title"), body: str(p, "message"), reply: d.reply}
	switch d.method {
	case "select":
		dl.list = &picker{rows: 8}
		switch opts := p["options"].(type) {
		case []any:
			for _, o := range opts {
				s := fmt.Sprint(o)
				dl.list.items = append(dl.list.items, item{label: s, value: s})
			}
		case []string:
			for _, s := range opts {
				dl.list.items = append(dl.list.items, item{label: s, value: s})
			}
		}
	case "confirm":
		dl.list = &picker{rows: 2, items: []item{{label: "Yes", value: true}, {label: "No", value: false}}}
	case "input", "editor":
		ta := newEditor(m.th)
		bindEditor(&ta, m.keys)
		ta.SetWidth(m.width)
		ta.Placeholder = str(p, "placeholder")
		if pre := str(p, "prefill"); pre != "" {
			ta.SetValue(pre)
		}
		dl.input = ta
	default:
		d.reply <- extensions.UIResponse{Cancelled: true}
		return
	}
	m.dialog = dl
}

func (m *Model) closeDialog(r extensions.UIResponse) {
	if m.dialog != nil {
		m.dialog.reply <- r
		m.dialog = nil
	}
}

// dialogKey drives the open dialog.
func (m *Model) dialogKey(k string, msg tea.KeyPressMsg) tea.Cmd {
	d := m.dialog
	if m.keys.is(k, actSelectCancel) {
		m.closeDialog(extensions.UIResponse{Cancelled: true})
		return nil
	}
	if d.list != nil {
		switch {
		case m.keys.is(k, actSelectUp):
			d.list.move(-1)
		case m.keys.is(k, actSelectDown):
			d.list.move(1)
		case m.keys.is(k, actSelectOK):
			it, ok := d.list.current()
			if !ok {
				return nil
			}
			if d.method == "confirm" {
				yes := it.value.(bool)
				m.closeDialog(extensions.UIResponse{Confirmed: &yes})
			} else {
				v := it.value.(string)
				m.closeDialog(extensions.UIResponse{Value: &v})
			}
		}
		return nil
	}
	switch {
	case d.method == "editor" && m.keys.is(k, actNewLine):
		d.input.InsertString("\n")
		return nil
	case m.keys.is(k, actSubmit):
		v := d.input.Value()
		m.closeDialog(extensions.UIResponse{Value: &v})
		return nil
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	return cmd
}

// render draws the dialog; inputRow is the row of its text field (-1:
// none).
func (d *dialog) render(width int, th *Theme) (out []string, inputRow int) {
	inputRow = -1
	if d.title != "" {
		out = append(out, wrap(th.Accent.Bold(true).Render(d.title), width)...)
	}
	if d.body != "" {
		out = append(out, wrap(d.body, width)...)
	}
	if d.list != nil {
		out = append(out, d.list.render(width, th)...)
	} else {
		inputRow = len(out)
		out = append(out, strings.Split(d.input.View(), "\n")...)
		out = append(out, th.Dim.Render("enter confirms · escape cancels"))
	}
	return out, inputRow
}

// extensionLines are the status entries and widgets extensions set.
func (m *Model) extensionLines() []string {
	var out []string
	keys := make([]string, 0, len(m.widgets))
	for k := range m.widgets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, l := range m.widgets[k] {
			out = append(out, m.th.Dim.Render(l))
		}
	}
	if len(m.statuses) > 0 {
		ks := make([]string, 0, len(m.statuses))
		for k := range m.statuses {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		var parts []string
		for _, k := range ks {
			parts = append(parts, m.statuses[k])
		}
		out = append(out, m.th.Dim.Render(strings.Join(parts, " · ")))
	}
	return out
}
