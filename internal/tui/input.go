package tui

import (
	"encoding/base64"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/tools"
)

// key handles one key press.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := msg.String()
	km := m.keys

	if m.login != nil {
		return m.loginKey(k, msg)
	}
	if m.dialog != nil {
		return m.dialogKey(k, msg)
	}
	if m.overlay != nil {
		return m.overlayKey(m.overlay, k, msg, true)
	}

	// Exit and clear come first: they work in every state.
	if km.is(k, actClear) {
		now := m.now()
		if !m.lastCtrlC.IsZero() && now.Sub(m.lastCtrlC) < doublePress {
			return m.quit()
		}
		m.lastCtrlC = now
		m.editor.Reset()
		m.images, m.imageNames = nil, nil
		m.menu = nil
		m.notify("Press "+keyText(k)+" again to exit", false)
		return nil
	}
	if km.is(k, actExit) && m.editor.Value() == "" {
		return m.quit()
	}
	if m.notice != "" && !m.noticeErr && strings.HasPrefix(m.notice, "Press ") {
		m.notice = ""
	}

	if m.menu != nil {
		switch {
		case km.is(k, actSelectUp):
			m.menu.move(-1)
			return nil
		case km.is(k, actSelectDown):
			m.menu.move(1)
			return nil
		case m.menu.files && (km.is(k, actTab) || km.is(k, actSubmit)):
			if it, ok := m.menu.current(); ok {
				v := m.editor.Value()
				i := strings.LastIndexAny(v, " \n") + 1
				m.editor.SetValue(v[:i] + "@" + it.label + " ")
			}
			m.menu = nil
			return nil
		case km.is(k, actTab):
			if it, ok := m.menu.current(); ok {
				m.editor.SetValue("/" + it.label + " ")
				m.menu = nil
			}
			return nil
		case km.is(k, actSubmit):
			it, ok := m.menu.current()
			m.menu = nil
			if ok {
				text := strings.TrimSpace(m.editor.Value())
				name, args, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
				if name != it.label {
					args = ""
				}
				m.editor.Reset()
				return m.runCommand(it.label, strings.TrimSpace(args))
			}
		case km.is(k, actSelectCancel) && k == "esc":
			m.menu = nil
			return nil
		}
	}

	switch {
	case km.is(k, actInterrupt):
		return m.interrupt()
	case km.is(k, actNewLine):
		m.editor.InsertString("\n")
		return nil
	case km.is(k, actFollowUp):
		return m.submit("followUp")
	case km.is(k, actSubmit):
		return m.submit("steer")
	case km.is(k, actDequeue):
		m.dequeue()
		return nil
	case km.is(k, actExpandTools):
		m.expanded = !m.expanded
		return nil
	case km.is(k, actToggleThink):
		m.showThinking = !m.showThinking
		return nil
	case km.is(k, actCycleThink):
		if l := m.sess.CycleThinkingLevel(); l != "" {
			m.notify("Thinking level: "+l, false)
		} else {
			m.notify("The model does not think", false)
		}
		return nil
	case km.is(k, actCycleModel):
		if mod, level, _ := m.sess.CycleModel(); mod != nil {
			m.notify("Model: ("+mod.Provider+") "+mod.ID+" "+level, false)
		}
		return nil
	case km.is(k, actSelectModel):
		return m.runCommand("model", "")
	case km.is(k, actPageUp):
		m.scrollBy(max(1, m.height/2))
		return nil
	case km.is(k, actPageDown):
		m.scrollBy(-max(1, m.height/2))
		return nil
	case km.is(k, actTree):
		return m.runCommand("tree", "")
	case km.is(k, actNewSession):
		return m.runCommand("new", "")
	case km.is(k, actResume):
		return m.runCommand("resume", "")
	case km.is(k, actForkSession):
		return m.runCommand("fork", "")
	case km.is(k, actExternal):
		return m.externalEditor()
	case km.is(k, actCursorUp) && m.historyUsable():
		if m.histIdx > 0 {
			m.histIdx--
			m.editor.SetValue(m.history[m.histIdx])
		}
		return nil
	case km.is(k, actCursorDown) && m.histIdx < len(m.history) && m.editor.Line() == m.editor.LineCount()-1:
		m.histIdx++
		if m.histIdx == len(m.history) {
			m.editor.Reset()
		} else {
			m.editor.SetValue(m.history[m.histIdx])
		}
		return nil
	case km.is(k, actTab):
		m.completePath()
		return nil
	}
	cmd := m.editKey(k, msg)
	m.updateMenu()
	return cmd
}

// historyUsable: Up recalls history when the editor is empty or shows a
// recalled entry and the cursor is on its first line.
func (m *Model) historyUsable() bool {
	if len(m.history) == 0 || m.editor.Line() != 0 {
		return false
	}
	v := m.editor.Value()
	return v == "" || (m.histIdx < len(m.history) && v == m.history[m.histIdx])
}

// interrupt is escape: abort the run (queued messages back to the editor),
// close the menu, or (twice on an empty idle editor) the double-escape
// action.
func (m *Model) interrupt() tea.Cmd {
	if m.menu != nil {
		m.menu = nil
		return nil
	}
	if m.streaming {
		steering, followUp := m.sess.ClearQueue()
		queued := append(steering, followUp...)
		if len(queued) > 0 {
			text := strings.Join(queued, "\n\n")
			if cur := m.editor.Value(); cur != "" {
				text += "\n\n" + cur
			}
			m.editor.SetValue(text)
		}
		// Abort returns once the run has ended: off the UI goroutine.
		s := m.sess
		return func() tea.Msg {
			s.AbortWith("Operation aborted")
			s.AbortBash()
			return nil
		}
	}
	if m.bashRunning() {
		s := m.sess
		return func() tea.Msg { s.AbortBash(); return nil }
	}
	if m.editor.Value() != "" {
		return nil
	}
	now := m.now()
	if !m.lastEsc.IsZero() && now.Sub(m.lastEsc) < doublePress {
		m.lastEsc = now.Add(-doublePress) // a third press starts again
		switch m.sess.Settings().String("doubleEscapeAction", "tree") {
		case "tree":
			return m.runCommand("tree", "")
		case "fork":
			return m.runCommand("fork", "")
		}
		return nil
	}
	m.lastEsc = now
	return nil
}

func (m *Model) bashRunning() bool {
	for _, b := range m.bashes {
		if !b.done {
			return true
		}
	}
	return false
}

// dequeue moves the queued messages back to the editor.
func (m *Model) dequeue() {
	steering, followUp := m.sess.ClearQueue()
	queued := append(steering, followUp...)
	if len(queued) == 0 {
		return
	}
	text := strings.Join(queued, "\n\n")
	if cur := m.editor.Value(); cur != "" {
		text += "\n\n" + cur
	}
	m.editor.SetValue(text)
}

// submit sends the editor's text: a command, a shell command, or a prompt
// (queued as steering or follow-up while a run goes on).
func (m *Model) submit(queueAs string) tea.Cmd {
	raw := m.editor.Value()
	text := strings.TrimSpace(raw)
	if text == "" && len(m.images) == 0 {
		return nil
	}
	images := m.images
	if strings.HasPrefix(text, "/") || strings.HasPrefix(text, "!") {
		images = nil // commands and shell commands leave them for the next message
	} else {
		m.images, m.imageNames = nil, nil
	}
	m.menu = nil
	m.editor.Reset()
	m.edit.reset()
	if len(m.history) == 0 || m.history[len(m.history)-1] != raw {
		m.history = append(m.history, raw)
	}
	m.histIdx = len(m.history)
	m.scroll = 0
	m.notice = ""
	if m.live.ReadOnly() != "" {
		m.notify("This session is read-only here: "+m.live.ReadOnly(), true)
		return nil
	}
	if strings.HasPrefix(text, "/") {
		name, args, _ := strings.Cut(text[1:], " ")
		if c := findCommand(name); c != nil {
			return m.runCommand(name, strings.TrimSpace(args))
		}
		// Templates, skills and extension commands go to the core.
	}
	if strings.HasPrefix(text, "!") {
		exclude := strings.HasPrefix(text, "!!")
		cmd := strings.TrimSpace(strings.TrimLeft(text, "!"))
		if cmd == "" {
			return nil
		}
		return m.runBash(cmd, exclude)
	}
	if m.streaming {
		s := m.sess
		return func() tea.Msg {
			var err error
			if queueAs == "followUp" {
				_, err = s.FollowUp(text, images)
			} else {
				_, err = s.Steer(text, images)
			}
			return resultMsg{err: err}
		}
	}
	return m.promptCmd(text, images, queueAs)
}

type bashDoneMsg struct {
	b   *block
	res core.BashResult
	err error
}

// runBash runs !cmd: its output streams into a block; !! keeps it out of
// the context.
func (m *Model) runBash(command string, exclude bool) tea.Cmd {
	m.bashSeq++
	id := "tui-bash-" + itoa(m.bashSeq)
	b := &block{kind: kindBash, command: command}
	m.bashes[id] = b
	m.addBlock(b)
	s := m.sess
	return func() tea.Msg {
		res, err := s.RunBash(id, command, exclude)
		return resultMsg{err: err, after: func(m *Model) tea.Cmd {
			b.done = true
			if err == nil {
				b.output = res.Output
				if res.ExitCode != nil && *res.ExitCode != 0 {
					b.output += "\n(exit code " + itoa(*res.ExitCode) + ")"
				}
				if res.Cancelled {
					b.output += "\n(cancelled)"
				}
			}
			b.invalidate()
			return nil
		}}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// updateMenu opens, filters or closes the slash menu (and the file list
// of an @ word) as the editor changes.
func (m *Model) updateMenu() {
	v := m.editor.Value()
	word := v[strings.LastIndexAny(v, " \n")+1:]
	if strings.HasPrefix(word, "@") && m.editor.Line() == m.editor.LineCount()-1 {
		m.fileMenu(word[1:])
		return
	}
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		m.menu = nil
		return
	}
	if m.menu != nil && m.menu.files {
		m.menu = nil
	}
	if m.menu == nil {
		m.menu = &picker{items: m.commandItems(), rows: 5}
	}
	m.menu.setFilter("")
	prefix := strings.ToLower(v[1:])
	var items []item
	for _, it := range m.commandItems() {
		if strings.HasPrefix(strings.ToLower(it.label), prefix) {
			items = append(items, it)
		}
	}
	if prefix != "" {
		for _, it := range m.commandItems() {
			if !strings.HasPrefix(strings.ToLower(it.label), prefix) && strings.Contains(strings.ToLower(it.label), prefix) {
				items = append(items, it)
			}
		}
	}
	m.menu.items = items
	if m.menu.selected >= len(items) {
		m.menu.selected = 0
	}
	if len(items) == 0 {
		m.menu = nil
	}
}

// pastedImage reads a pasted text that names an image file (a path,
// quoted, with escaped spaces, or a file:// URL, as terminals paste a
// dropped file): png, jpeg, gif or webp up to 20 MB.
func pastedImage(pasted, cwd string) (ai.Content, string, bool) {
	p := strings.TrimSpace(pasted)
	if p == "" || strings.ContainsAny(p, "\n\r") {
		return ai.Content{}, "", false
	}
	if len(p) >= 2 && (p[0] == '\'' || p[0] == '"') && p[len(p)-1] == p[0] {
		p = p[1 : len(p)-1]
	}
	if u, ok := strings.CutPrefix(p, "file://"); ok {
		if dec, err := url.PathUnescape(u); err == nil {
			p = dec
		}
	} else {
		p = strings.ReplaceAll(p, "\\ ", " ")
	}
	abs := tools.ResolvePath(p, cwd)
	st, err := os.Stat(abs)
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || st.Size() > 20<<20 {
		return ai.Content{}, "", false
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return ai.Content{}, "", false
	}
	switch mime := tools.DetectImageMime(data); mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return ai.Image(base64.StdEncoding.EncodeToString(data), mime), filepath.Base(abs), true
	}
	return ai.Content{}, "", false
}

// fileMenu lists the project's files matching query (an @ word): those
// whose path starts with it, then those containing it.
func (m *Model) fileMenu(query string) {
	if m.menu == nil || !m.menu.files {
		m.files = nil // a new @ word: the files as they are now
	}
	files := m.projectFiles()
	q := strings.ToLower(query)
	var first, rest []item
	for _, f := range files {
		lf := strings.ToLower(f)
		switch {
		case strings.HasPrefix(lf, q) || strings.HasPrefix(strings.ToLower(filepath.Base(f)), q):
			first = append(first, item{label: f})
		case strings.Contains(lf, q):
			rest = append(rest, item{label: f})
		}
		if len(first) >= 200 {
			break
		}
	}
	items := append(first, rest...)
	if len(items) == 0 {
		m.menu = nil
		return
	}
	m.menu = &picker{items: items, rows: 5, files: true}
}

// projectFiles lists the session directory's files once: git's view
// (tracked and untracked, .gitignore applied) in a repository, else a walk
// that skips hidden directories and node_modules (at most 20000).
func (m *Model) projectFiles() []string {
	cwd := m.sess.Cwd()
	if m.files != nil && m.filesDir == cwd {
		return m.files
	}
	m.filesDir = cwd
	m.files = []string{}
	if out, err := exec.Command("git", "-C", cwd, "ls-files", "--cached", "--others", "--exclude-standard").Output(); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l != "" && len(m.files) < 20000 {
				m.files = append(m.files, l)
			}
		}
		return m.files
	}
	filepath.WalkDir(cwd, func(p string, d os.DirEntry, err error) error {
		if err != nil || len(m.files) >= 20000 {
			return filepath.SkipDir
		}
		name := d.Name()
		if d.IsDir() {
			if p != cwd && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if rel, err := filepath.Rel(cwd, p); err == nil {
			m.files = append(m.files, filepath.ToSlash(rel))
		}
		return nil
	})
	return m.files
}

// completePath completes the last word of the editor as a path (Tab).
func (m *Model) completePath() {
	v := m.editor.Value()
	i := strings.LastIndexAny(v, " \n") + 1
	word := v[i:]
	prefix := ""
	if strings.HasPrefix(word, "@") {
		prefix, word = "@", word[1:]
	}
	if word == "" && prefix == "" {
		return
	}
	dir, base := filepath.Split(word)
	look := dir
	if !filepath.IsAbs(look) {
		look = filepath.Join(m.sess.Cwd(), dir)
	}
	ents, err := os.ReadDir(look)
	if err != nil {
		return
	}
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), base) && (base != "" || !strings.HasPrefix(e.Name(), ".")) {
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	common := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, common) {
			common = common[:len(common)-1]
		}
	}
	if len(names) > 1 && common == base {
		m.notify(strings.Join(names, "  "), false)
		return
	}
	m.editor.SetValue(v[:i] + prefix + dir + common)
}

// overlayKey drives a selector: arrows move, enter confirms, escape
// cancels, typing filters when it searches.
func (m *Model) overlayKey(p *picker, k string, msg tea.KeyPressMsg, isOverlay bool) tea.Cmd {
	km := m.keys
	if p.onKey != nil {
		if cmd, ok := p.onKey(m, k); ok {
			return cmd
		}
	}
	switch {
	case km.is(k, actSelectUp):
		p.move(-1)
	case km.is(k, actSelectDown):
		p.move(1)
	case k == "pgup":
		p.move(-max(1, p.rows))
	case k == "pgdown":
		p.move(max(1, p.rows))
	case km.is(k, actSelectOK):
		it, ok := p.current()
		m.overlay = nil
		if ok && p.onSelect != nil {
			return p.onSelect(m, it)
		}
	case km.is(k, actSelectCancel):
		m.overlay = nil
		if p.onCancel != nil {
			return p.onCancel(m)
		}
	case k == "backspace" && p.search:
		if p.filter != "" {
			r := []rune(p.filter)
			p.setFilter(string(r[:len(r)-1]))
		}
	default:
		if p.search && msg.Text != "" {
			p.setFilter(p.filter + msg.Text)
		}
	}
	return nil
}

// quit leaves the program (the caller reprints the transcript).
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	return tea.Quit
}
