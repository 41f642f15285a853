package tui

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/pisces-agent/pisces/internal/browse"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/sessions"
)

// command is a built-in slash command.
type command struct {
	name string
	desc string
	run  func(m *Model, args string) tea.Cmd
}

var builtinCommands []command

func init() {
	builtinCommands = []command{
		{"model", "Select the model", (*Model).cmdModel},
		{"thinking", "Select the thinking level", (*Model).cmdThinking},
		{"settings", "Change settings", (*Model).cmdSettings},
		{"tree", "Navigate the session tree", (*Model).cmdTree},
		{"resume", "Resume another session", (*Model).cmdResume},
		{"new", "Start a new session", (*Model).cmdNew},
		{"fork", "Fork from an earlier message into a new session", (*Model).cmdFork},
		{"clone", "Copy the current branch into a new session", (*Model).cmdClone},
		{"name", "Name the session", (*Model).cmdName},
		{"label", "Label the current entry (no text: remove)", (*Model).cmdLabel},
		{"compact", "Compact the context (optional instructions)", (*Model).cmdCompact},
		{"export", "Export the session to an HTML file", (*Model).cmdExport},
		{"copy", "Copy the last reply to the clipboard", (*Model).cmdCopy},
		{"session", "Session file, messages, tokens and cost", (*Model).cmdSession},
		{"hotkeys", "List the keys", (*Model).cmdHotkeys},
		{"reload", "Reload settings, templates, skills and rules", (*Model).cmdReload},
		{"mcp", "MCP servers: state, tools, errors", (*Model).cmdMCP},
		{"login", "Log in to a subscription (Claude, ChatGPT, Copilot)", (*Model).cmdLogin},
		{"logout", "Log out of a subscription", (*Model).cmdLogout},
		{"quit", "Quit", func(m *Model, _ string) tea.Cmd { return m.quit() }},
	}
}

func findCommand(name string) *command {
	for i := range builtinCommands {
		if builtinCommands[i].name == name {
			return &builtinCommands[i]
		}
	}
	return nil
}

// commandItems are the rows of the slash menu: the built-in commands, then
// the session's templates, skills and extension commands.
func (m *Model) commandItems() []item {
	var out []item
	for _, c := range builtinCommands {
		out = append(out, item{label: c.name, desc: c.desc})
	}
	for _, c := range m.sess.Commands() {
		if findCommand(c.Name) != nil {
			continue
		}
		out = append(out, item{label: c.Name, desc: c.Description, value: c.Source})
	}
	return out
}

// runCommand runs a slash command chosen in the menu or typed.
func (m *Model) runCommand(name, args string) tea.Cmd {
	if c := findCommand(name); c != nil {
		return c.run(m, args)
	}
	// A template, skill or extension command: the core expands or runs it.
	text := "/" + name
	if args != "" {
		text += " " + args
	}
	if m.streaming {
		s := m.sess
		return func() tea.Msg { _, err := s.Steer(text, nil); return resultMsg{err: err} }
	}
	return m.promptCmd(text, nil, "")
}

func (m *Model) cmdModel(args string) tea.Cmd {
	models := m.sess.Models().Available()
	if args != "" {
		provider, id, ok := strings.Cut(args, "/")
		if !ok {
			provider, id = "", args
		}
		for _, mod := range models {
			if mod.ID == id && (provider == "" || mod.Provider == provider) {
				return m.setModel(mod.Provider, mod.ID)
			}
		}
		m.notify("No model "+args+" (with a key)", true)
		return nil
	}
	cur := m.sess.Model()
	p := &picker{title: "Select model", search: true, rows: 10}
	for _, mod := range models {
		p.items = append(p.items, item{label: mod.ID, desc: mod.Provider, value: [2]string{mod.Provider, mod.ID}})
		if cur != nil && mod.ID == cur.ID && mod.Provider == cur.Provider {
			p.selected = len(p.items) - 1
		}
	}
	p.onSelect = func(m *Model, it item) tea.Cmd {
		v := it.value.([2]string)
		return m.setModel(v[0], v[1])
	}
	m.overlay = p
	return nil
}

func (m *Model) setModel(provider, id string) tea.Cmd {
	if _, err := m.sess.SetModel(provider, id); err != nil {
		m.notify(err.Error(), true)
		return nil
	}
	m.notify("Model: ("+provider+") "+id, false)
	m.ctxUsage = m.sess.ContextUsage()
	return nil
}

func (m *Model) cmdThinking(args string) tea.Cmd {
	set := func(m *Model, level string) tea.Cmd {
		if _, err := m.sess.SetThinkingLevel(level); err != nil {
			m.notify(err.Error(), true)
		} else {
			m.notify("Thinking level: "+m.sess.ThinkingLevel(), false)
		}
		return nil
	}
	if args != "" {
		return set(m, args)
	}
	p := &picker{title: "Select thinking level", rows: 8}
	for _, l := range m.sess.AvailableThinkingLevels() {
		p.items = append(p.items, item{label: l})
		if l == m.sess.ThinkingLevel() {
			p.selected = len(p.items) - 1
		}
	}
	p.onSelect = func(m *Model, it item) tea.Cmd { return set(m, it.label) }
	m.overlay = p
	return nil
}

func (m *Model) cmdSettings(string) tea.Cmd {
	st := m.sess.State()
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	p := &picker{title: "Settings", help: "enter toggles or cycles · escape closes", rows: 8}
	p.items = []item{
		{label: "steeringMode", desc: st.SteeringMode, value: "steeringMode"},
		{label: "followUpMode", desc: st.FollowUpMode, value: "followUpMode"},
		{label: "autoCompaction", desc: onOff(st.AutoCompaction), value: "autoCompaction"},
		{label: "autoRetry", desc: onOff(st.AutoRetry), value: "autoRetry"},
		{label: "showThinking", desc: onOff(m.showThinking), value: "showThinking"},
		{label: "expandTools", desc: onOff(m.expanded), value: "expandTools"},
	}
	p.onSelect = func(m *Model, it item) tea.Cmd {
		other := func(mode string) string {
			if mode == "all" {
				return "one-at-a-time"
			}
			return "all"
		}
		var err error
		switch it.value {
		case "steeringMode":
			err = m.sess.SetSteeringMode(other(st.SteeringMode))
		case "followUpMode":
			err = m.sess.SetFollowUpMode(other(st.FollowUpMode))
		case "autoCompaction":
			err = m.sess.SetAutoCompaction(!st.AutoCompaction)
		case "autoRetry":
			err = m.sess.SetAutoRetry(!st.AutoRetry)
		case "showThinking":
			m.showThinking = !m.showThinking
		case "expandTools":
			m.expanded = !m.expanded
		}
		if err != nil {
			m.notify(err.Error(), true)
			return nil
		}
		sel := m.overlay
		cmd := m.cmdSettings("")
		if sel == nil && m.overlay != nil {
			m.overlay.selected = indexOf(m.overlay.items, it.label)
		}
		return cmd
	}
	m.overlay = p
	return nil
}

func indexOf(items []item, label string) int {
	for i, it := range items {
		if it.label == label {
			return i
		}
	}
	return 0
}

// cmdTree shows the session tree; enter moves the leaf there (a user
// message comes back into the editor), escape returns.
func (m *Model) cmdTree(string) tea.Cmd {
	st := m.sess.Store()
	t := browse.SessionTree(st, browse.TreeOptions{View: browse.ViewBrowse, Flat: true})
	depth := map[string]int{}
	kids := map[string]int{}
	for _, n := range t.Flat {
		if n.Entry.ParentID != nil {
			kids[*n.Entry.ParentID]++
		}
	}
	p := &picker{title: "Session Tree", help: "↑↓ move · enter go there · ctrl+s go there and summarise the branch left · escape back", search: true,
		rows: max(5, m.height-12)}
	leaf := st.LeafID()
	for _, n := range t.Flat {
		e := n.Entry
		d := 0
		if e.ParentID != nil {
			d = depth[*e.ParentID]
			if kids[*e.ParentID] > 1 {
				d++
			}
		}
		depth[e.ID] = d
		label := "• " + treeLabel(e)
		if e.Label != "" {
			label += " [" + e.Label + "]"
		}
		if e.ID == leaf {
			label += " ← current"
		}
		p.items = append(p.items, item{label: label, indent: min(d, 12) * 2, value: e.ID})
	}
	p.selected = len(p.items) - 1
	for i, it := range p.items {
		if it.value == leaf {
			p.selected = i
		}
	}
	p.onKey = func(m *Model, k string) (tea.Cmd, bool) {
		if k != "ctrl+s" {
			return nil, false
		}
		it, ok := p.current()
		if !ok {
			return nil, true
		}
		m.overlay = nil
		m.notify("Summarising the branch left…", false)
		return m.navigate(it.value.(string), true), true
	}
	p.onSelect = func(m *Model, it item) tea.Cmd {
		return m.navigate(it.value.(string), false)
	}
	m.overlay = p
	return nil
}

// navigate moves the leaf to id (with a summary of the branch left when
// summarize is set).
func (m *Model) navigate(id string, summarize bool) tea.Cmd {
	s := m.sess
	return func() tea.Msg {
		res, err := s.NavigateTree(id, core.NavigateOptions{Summarize: summarize})
		return resultMsg{err: err, after: func(m *Model) tea.Cmd {
			if err != nil || res == nil {
				return nil
			}
			if res.Cancelled {
				m.notify("Navigation cancelled", false)
				return nil
			}
			m.notice = ""
			m.reload()
			if res.EditorText != nil {
				m.editor.SetValue(*res.EditorText)
			}
			return nil
		}}
	}
}

func treeLabel(e *browse.TreeEntry) string {
	preview := ""
	if e.Preview != nil {
		preview = strings.Join(strings.Fields(*e.Preview), " ")
	}
	if e.BrowseFields != nil {
		switch {
		case e.FormattedToolCall != nil:
			return "[" + *e.FormattedToolCall + "]"
		case e.Role == "user" || e.Role == "assistant":
			if e.StopReason == "aborted" && preview == "" {
				preview = "(aborted)"
			}
			return e.Role + ": " + preview
		case e.RawRole != "":
			return strings.TrimSpace("[" + e.RawRole + "] " + preview)
		case e.Role != "":
			return strings.TrimSpace("[" + e.Role + "] " + preview)
		}
	}
	if preview != "" {
		return "[" + e.Type + "] " + preview
	}
	return "[" + e.Type + "]"
}

// cmdResume lists sessions (this folder; tab: all) and switches to the
// chosen one.
func (m *Model) cmdResume(string) tea.Cmd {
	return m.openResume("cwd")
}

func (m *Model) openResume(scope string) tea.Cmd {
	infos, err := m.sess.ListSessions(scope, "")
	if err != nil {
		m.notify(err.Error(), true)
		return nil
	}
	sort.SliceStable(infos, func(i, j int) bool { return infos[i].Modified.After(infos[j].Modified) })
	title := "Resume Session (Current Folder)"
	if scope == "all" {
		title = "Resume Session (All)"
	}
	p := &picker{title: title, help: "tab scope · enter open · ctrl+r rename · ctrl+d delete · escape back", search: true,
		rows: max(5, m.height-12)}
	cur := m.sess.Store().File()
	for _, in := range infos {
		label := in.Name
		if label == "" {
			label = strings.Join(strings.Fields(in.FirstMessage), " ")
		}
		if in.Path == cur {
			label += " (current)"
		}
		desc := fmt.Sprintf("%d msgs · %s", in.MessageCount, age(m.now(), in.Modified))
		if scope == "all" && in.Cwd != "" {
			desc += " · " + in.Cwd
		}
		p.items = append(p.items, item{label: label, desc: desc, value: in})
	}
	p.onKey = func(m *Model, k string) (tea.Cmd, bool) {
		switch {
		case m.keys.is(k, actTab):
			next := "all"
			if scope == "all" {
				next = "cwd"
			}
			filter := p.filter
			cmd := m.openResume(next)
			if m.overlay != nil {
				m.overlay.setFilter(filter)
			}
			return cmd, true
		case m.keys.is(k, actRenameSession):
			it, ok := p.current()
			if !ok {
				return nil, true
			}
			in := it.value.(session.Info)
			return m.ask("Rename session", in.Name, func(m *Model, name string) tea.Cmd {
				if err := m.sess.RenameSession(in.Path, name); err != nil {
					m.notify(err.Error(), true)
				}
				filter := p.filter
				cmd := m.openResume(scope)
				if m.overlay != nil {
					m.overlay.setFilter(filter)
				}
				return cmd
			}), true
		case m.keys.is(k, actDeleteSession):
			it, ok := p.current()
			if !ok {
				return nil, true
			}
			in := it.value.(session.Info)
			if _, err := m.sess.DeleteSession(in.Path); err != nil {
				m.notify(err.Error(), true)
				return nil, true
			}
			m.notify("Deleted "+filepath.Base(in.Path), false)
			filter := p.filter
			cmd := m.openResume(scope)
			if m.overlay != nil {
				m.overlay.setFilter(filter)
			}
			return cmd, true
		}
		return nil, false
	}
	p.onSelect = func(m *Model, it item) tea.Cmd {
		in := it.value.(session.Info)
		if in.Path == cur {
			return nil
		}
		return m.switchTo(func(mgr *sessions.Manager, from *sessions.Live) (*sessions.Live, error) {
			return mgr.Switch(from, in.Path)
		}, "")
	}
	m.overlay = p
	return nil
}

func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
}

// switchTo moves the UI to another live session of the manager (new,
// resume, fork, clone); editorText, when set, goes into the editor.
func (m *Model) switchTo(open func(*sessions.Manager, *sessions.Live) (*sessions.Live, error), editorText string) tea.Cmd {
	from, mgr := m.live, m.mgr
	return func() tea.Msg {
		l, err := open(mgr, from)
		return resultMsg{err: cancelled(err), after: func(m *Model) tea.Cmd {
			if err != nil || l == nil {
				return nil
			}
			m.attach(l)
			mgr.Release(from)
			m.printed = 0
			if m.opts.Inline {
				m.printed = len(m.blocks) // the scrollback keeps the old session
			}
			if editorText != "" {
				m.editor.SetValue(editorText)
			}
			if m.streaming {
				return tea.Batch(m.feed.next, m.startSpinner())
			}
			return m.feed.next
		}}
	}
}

func cancelled(err error) error {
	if errors.Is(err, core.ErrCancelled) {
		return errors.New("cancelled by an extension")
	}
	return err
}

func (m *Model) cmdNew(string) tea.Cmd {
	return m.switchTo(func(mgr *sessions.Manager, from *sessions.Live) (*sessions.Live, error) {
		return mgr.Create(from, "", "")
	}, "")
}

func (m *Model) cmdClone(string) tea.Cmd {
	return m.switchTo(func(mgr *sessions.Manager, from *sessions.Live) (*sessions.Live, error) {
		return mgr.Clone(from)
	}, "")
}

// cmdFork lists the user messages; the new session holds the path before
// the chosen one, whose text comes back into the editor.
func (m *Model) cmdFork(string) tea.Cmd {
	msgs := m.sess.ForkMessages()
	if len(msgs) == 0 {
		m.notify("No messages to fork from", false)
		return nil
	}
	p := &picker{title: "Fork from message", search: true, rows: max(5, m.height-12)}
	for _, fm := range msgs {
		p.items = append(p.items, item{label: strings.Join(strings.Fields(fm.Text), " "), value: fm})
	}
	p.selected = len(p.items) - 1
	p.onSelect = func(m *Model, it item) tea.Cmd {
		fm := it.value.(core.ForkMessage)
		from, mgr := m.live, m.mgr
		return func() tea.Msg {
			l, text, err := mgr.Fork(from, fm.EntryID)
			return resultMsg{err: cancelled(err), after: func(m *Model) tea.Cmd {
				if err != nil || l == nil {
					return nil
				}
				m.attach(l)
				mgr.Release(from)
				if m.opts.Inline {
					m.printed = len(m.blocks)
				} else {
					m.printed = 0
				}
				m.editor.SetValue(text)
				return m.feed.next
			}}
		}
	}
	m.overlay = p
	return nil
}

func (m *Model) cmdName(args string) tea.Cmd {
	if args == "" {
		m.notify("Usage: /name <name>", true)
		return nil
	}
	if err := m.sess.SetSessionName(args); err != nil {
		m.notify(err.Error(), true)
		return nil
	}
	m.notify("Session named "+args, false)
	return nil
}

func (m *Model) cmdLabel(args string) tea.Cmd {
	leaf := m.sess.Store().LeafID()
	if leaf == "" {
		m.notify("Nothing to label yet", true)
		return nil
	}
	if err := m.sess.SetLabel(leaf, args); err != nil {
		m.notify(err.Error(), true)
		return nil
	}
	if args == "" {
		m.notify("Label removed", false)
	} else {
		m.notify("Labelled "+args, false)
	}
	return nil
}

func (m *Model) cmdCompact(args string) tea.Cmd {
	s := m.sess
	m.notify("Compacting the context…", false)
	return func() tea.Msg {
		_, err := s.Compact(args)
		return resultMsg{err: err, after: func(m *Model) tea.Cmd {
			if err == nil {
				m.notice = ""
			}
			return nil
		}}
	}
}

func (m *Model) cmdExport(args string) tea.Cmd {
	path, err := m.sess.ExportHTML(args)
	if err != nil {
		m.notify(err.Error(), true)
		return nil
	}
	m.info("Exported to " + path)
	return nil
}

func (m *Model) cmdCopy(string) tea.Cmd {
	text, ok := m.sess.LastAssistantText()
	if !ok {
		m.notify("No reply to copy yet", true)
		return nil
	}
	m.notify("Copied the last reply to the clipboard", false)
	return tea.SetClipboard(text)
}

func (m *Model) cmdSession(string) tea.Cmd {
	st := m.sess.Stats()
	state := m.sess.State()
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s", st.SessionID)
	if state.SessionName != "" {
		fmt.Fprintf(&b, " (%s)", state.SessionName)
	}
	if st.SessionFile != "" {
		fmt.Fprintf(&b, "\nFile: %s", st.SessionFile)
	} else {
		b.WriteString("\nNot saved (--no-session)")
	}
	fmt.Fprintf(&b, "\nMessages: %d user, %d assistant, %d tool calls, %d total", st.UserMessages, st.AssistantMessages, st.ToolCalls, st.TotalMessages)
	fmt.Fprintf(&b, "\nTokens: %d in, %d out, %d cache read, %d cache write, %d total", st.Tokens.Input, st.Tokens.Output, st.Tokens.CacheRead, st.Tokens.CacheWrite, st.Tokens.TotalTokens)
	fmt.Fprintf(&b, "\nCost: $%.4f", st.Cost)
	m.info(b.String())
	return nil
}

func (m *Model) cmdHotkeys(string) tea.Cmd {
	k := func(a string) string {
		ks := m.keys.bindings[a]
		out := make([]string, len(ks))
		for i, x := range ks {
			out[i] = keyText(x)
		}
		if len(out) == 0 {
			return "(unbound)"
		}
		return strings.Join(out, ", ")
	}
	rows := [][2]string{
		{k(actSubmit), "send (while working: queue a steering message)"},
		{k(actFollowUp), "queue a follow-up message"},
		{k(actNewLine), "new line"},
		{k(actInterrupt), "interrupt; twice on an empty editor: /tree"},
		{k(actClear), "clear the editor; twice: exit"},
		{k(actExit), "exit (empty editor)"},
		{k(actDequeue), "queued messages back to the editor"},
		{k(actExpandTools), "expand or collapse tool output"},
		{k(actToggleThink), "show or hide thinking"},
		{k(actCycleThink), "next thinking level"},
		{k(actCycleModel), "next model"},
		{k(actSelectModel), "select the model"},
		{k(actPageUp) + ", " + k(actPageDown), "scroll the transcript (also the mouse wheel)"},
		{k(actTab), "complete a command or path"},
		{k(actExternal), "edit the message in $VISUAL or $EDITOR"},
		{k(actCursorLeft) + ", " + k(actCursorRight), "cursor left, right"},
		{k(actWordLeft), "word left"},
		{k(actWordRight), "word right"},
		{k(actLineStart), "start of the line"},
		{k(actLineEnd), "end of the line"},
		{k(actJumpForward) + ", " + k(actJumpBackward), "jump to the next (previous) character typed"},
		{k(actDelWordBack), "delete the word before (kept for yank)"},
		{k(actDelWordForward), "delete the word after (kept for yank)"},
		{k(actDelToLineStart) + ", " + k(actDelToLineEnd), "delete to the line's start, end (kept for yank)"},
		{k(actYank) + ", " + k(actYankPop), "yank the last deleted text; then older ones"},
		{k(actUndo), "undo"},
		{"/", "commands"},
		{"!cmd, !!cmd", "run a shell command (!!: keep it out of the context)"},
	}
	var b strings.Builder
	b.WriteString("Keys")
	for _, r := range rows {
		fmt.Fprintf(&b, "\n  %-22s %s", r[0], r[1])
	}
	m.info(b.String())
	return nil
}

func (m *Model) cmdReload(string) tea.Cmd {
	if err := m.sess.Settings().Reload(); err != nil {
		m.notify(err.Error(), true)
		return nil
	}
	cmds := m.sess.ReloadResources()
	m.notify(fmt.Sprintf("Reloaded (%d commands)", len(cmds)), false)
	return nil
}
