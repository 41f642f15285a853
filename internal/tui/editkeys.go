package tui

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"unicode"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
)

// editState is what pi's editor keeps beside the text: the kill ring
// (text removed by the word and line deletions, yanked back), the undo
// stack, the last action (consecutive kills grow one entry; yank-pop
// needs a yank just before) and the character jump in progress.
type editState struct {
	kills   []string // the kill ring, newest last
	last    string   // "kill", "yank", "type-word" or ""
	yanked  int      // runes inserted by the last yank
	undo    []editSnapshot
	jumping int // 1: the next character is jumped to forward, -1: backward
}

type editSnapshot struct {
	value    string
	row, col int
}

// maxUndo bounds the undo stack.
const maxUndo = 200

// bindEditor gives the editor widget the keymap's keys for its own
// movements and deletions (the other keys the widget knows stay).
func bindEditor(ta *textarea.Model, km *Keymap) {
	b := func(action string) key.Binding {
		ks := km.bindings[action]
		if len(ks) == 0 {
			return key.NewBinding(key.WithDisabled())
		}
		var keys []string
		for _, k := range ks {
			keys = append(keys, k)
			if a := keyAliases[k]; a != "" {
				keys = append(keys, a)
			}
		}
		return key.NewBinding(key.WithKeys(keys...))
	}
	m := &ta.KeyMap
	m.LinePrevious = b(actCursorUp)
	m.LineNext = b(actCursorDown)
	m.CharacterBackward = b(actCursorLeft)
	m.CharacterForward = b(actCursorRight)
	m.WordBackward = b(actWordLeft)
	m.WordForward = b(actWordRight)
	m.LineStart = b(actLineStart)
	m.LineEnd = b(actLineEnd)
	m.DeleteCharacterBackward = b(actDelCharBack)
	m.DeleteCharacterForward = b(actDelCharForward)
	m.DeleteWordBackward = b(actDelWordBack)
	m.DeleteWordForward = b(actDelWordForward)
	m.DeleteBeforeCursor = b(actDelToLineStart)
	m.DeleteAfterCursor = b(actDelToLineEnd)
	m.PageUp = b(actPageUp)
	m.PageDown = b(actPageDown)
	m.InsertNewline.SetEnabled(false)
}

// cursor is the editor's cursor: line and rune column.
func cursor(ta *textarea.Model) (row, col int) { return ta.Line(), ta.Column() }

// setText replaces the editor's text and puts the cursor at row, col.
func setText(ta *textarea.Model, value string, row, col int) {
	ta.SetValue(value)
	ta.MoveToBegin()
	for i := 0; ta.Line() < row && i < len(value)+1; i++ {
		ta.CursorDown()
	}
	ta.SetCursorColumn(col)
}

func (e *editState) snapshot(ta *textarea.Model) {
	r, c := cursor(ta)
	e.undo = append(e.undo, editSnapshot{ta.Value(), r, c})
	if len(e.undo) > maxUndo {
		e.undo = e.undo[len(e.undo)-maxUndo:]
	}
}

// reset forgets the undo history and the last action (a new text).
func (e *editState) reset() {
	e.undo, e.last, e.jumping = nil, "", 0
}

// removed returns the text deleted between before and after (one run of
// runes, as the widget's deletions remove).
func removed(before, after string) string {
	b, a := []rune(before), []rune(after)
	n := len(b) - len(a)
	if n <= 0 {
		return ""
	}
	p := 0
	for p < len(a) && b[p] == a[p] {
		p++
	}
	return string(b[p : p+n])
}

// editKey handles the editor's keys that the widget does not know (the
// kill ring, undo, jumps) and records undo states and kills around the
// ones it does. It returns the widget's command.
func (m *Model) editKey(k string, msg tea.KeyPressMsg) tea.Cmd {
	e, ta, km := &m.edit, &m.editor, m.keys
	if e.jumping != 0 {
		dir := e.jumping
		e.jumping = 0
		switch {
		case km.is(k, actJumpForward) || km.is(k, actJumpBackward):
			return nil // pressed again: cancelled
		case msg.Text != "":
			jumpTo(ta, msg.Text, dir)
			e.last = ""
			return nil
		}
		// Another key: the jump is cancelled and the key does its work.
	}
	switch {
	case km.is(k, actJumpForward):
		e.jumping = 1
		return nil
	case km.is(k, actJumpBackward):
		e.jumping = -1
		return nil
	case km.is(k, actUndo):
		if n := len(e.undo); n > 0 {
			s := e.undo[n-1]
			e.undo = e.undo[:n-1]
			setText(ta, s.value, s.row, s.col)
		}
		e.last = ""
		return nil
	case km.is(k, actYank):
		if len(e.kills) == 0 {
			return nil
		}
		e.snapshot(ta)
		text := e.kills[len(e.kills)-1]
		ta.InsertString(text)
		e.last, e.yanked = "yank", len([]rune(text))
		return nil
	case km.is(k, actYankPop):
		if e.last != "yank" || len(e.kills) < 2 {
			return nil
		}
		e.snapshot(ta)
		// Take the yanked text out again, then put in the next older entry.
		r, c := cursor(ta)
		lines := strings.Split(ta.Value(), "\n")
		off := c
		for i := 0; i < r; i++ {
			off += len([]rune(lines[i])) + 1
		}
		all := []rune(ta.Value())
		start := max(0, off-e.yanked)
		rest := string(all[:start]) + string(all[off:])
		sr, sc := position(string(all[:start]))
		setText(ta, rest, sr, sc)
		last := e.kills[len(e.kills)-1]
		copy(e.kills[1:], e.kills[:len(e.kills)-1])
		e.kills[0] = last
		text := e.kills[len(e.kills)-1]
		ta.InsertString(text)
		e.last, e.yanked = "yank", len([]rune(text))
		return nil
	}
	kill, back := false, false
	switch {
	case km.is(k, actDelWordBack), km.is(k, actDelToLineStart):
		kill, back = true, true
	case km.is(k, actDelWordForward), km.is(k, actDelToLineEnd):
		kill = true
	}
	before := ta.Value()
	// As pi: the characters of a word typed in a row are undone together;
	// a space is undone with the word that follows it.
	typed := msg.Text != ""
	space := strings.ContainsFunc(msg.Text, unicode.IsSpace)
	coalesce := typed && !space && e.last == "type-word"
	if !coalesce {
		e.snapshot(ta)
	}
	var cmd tea.Cmd
	*ta, cmd = ta.Update(msg)
	after := ta.Value()
	if after == before {
		// Nothing changed: no undo state for it.
		if !coalesce {
			e.undo = e.undo[:len(e.undo)-1]
		}
		if !kill {
			e.last = ""
		}
		return cmd
	}
	switch {
	case kill:
		text := removed(before, after)
		switch {
		case e.last == "kill" && len(e.kills) > 0 && back:
			e.kills[len(e.kills)-1] = text + e.kills[len(e.kills)-1]
		case e.last == "kill" && len(e.kills) > 0:
			e.kills[len(e.kills)-1] += text
		default:
			e.kills = append(e.kills, text)
		}
		e.last = "kill"
	case typed:
		e.last = "type-word"
	default:
		e.last = ""
	}
	return cmd
}

// position is the line and rune column at the end of s.
func position(s string) (row, col int) {
	row = strings.Count(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return row, len([]rune(s))
}

// jumpTo moves the cursor to the next (dir 1) or previous (dir -1)
// occurrence of ch, searching the current line from the cursor, then the
// lines after (before) it. Nothing moves when there is none.
func jumpTo(ta *textarea.Model, ch string, dir int) {
	r, c := cursor(ta)
	lines := strings.Split(ta.Value(), "\n")
	target := []rune(ch)
	if len(target) != 1 {
		return
	}
	for i := r; i >= 0 && i < len(lines); i += dir {
		line := []rune(lines[i])
		from, to := 0, len(line)
		if i == r {
			if dir > 0 {
				from = c + 1
			} else {
				to = c
			}
		}
		if dir > 0 {
			for j := from; j < to; j++ {
				if line[j] == target[0] {
					setText(ta, ta.Value(), i, j)
					return
				}
			}
		} else {
			for j := min(to, len(line)) - 1; j >= from; j-- {
				if line[j] == target[0] {
					setText(ta, ta.Value(), i, j)
					return
				}
			}
		}
	}
}

// editorDoneMsg is the end of the external editor.
type editorDoneMsg struct {
	path string
	err  error
}

// externalEditor opens the editor's text in $VISUAL (else $EDITOR) on a
// temporary file; when it exits successfully, the file's text (without
// one final newline) replaces the editor's.
func (m *Model) externalEditor() tea.Cmd {
	ed := os.Getenv("VISUAL")
	if ed == "" {
		ed = os.Getenv("EDITOR")
	}
	if strings.TrimSpace(ed) == "" {
		m.notify("No editor configured: set $VISUAL or $EDITOR", true)
		return nil
	}
	f, err := os.CreateTemp("", "pisces-editor-*.md")
	if err != nil {
		m.notify(err.Error(), true)
		return nil
	}
	_, err = f.WriteString(m.editor.Value())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		m.notify(err.Error(), true)
		return nil
	}
	path := f.Name()
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		parts := strings.Fields(ed)
		cmd = exec.Command(parts[0], append(parts[1:], path)...)
	} else {
		// Through the shell: the variable may hold arguments
		// ("code --wait") and quotes.
		cmd = exec.Command("/bin/sh", "-c", ed+` "$1"`, "sh", path)
	}
	return tea.ExecProcess(cmd, func(err error) tea.Msg { return editorDoneMsg{path: path, err: err} })
}

// editorDone reads the external editor's file back.
func (m *Model) editorDone(msg editorDoneMsg) {
	defer os.Remove(msg.path)
	if msg.err != nil {
		m.notify("The editor failed: "+msg.err.Error()+" (the text is unchanged)", true)
		return
	}
	b, err := os.ReadFile(msg.path)
	if err != nil {
		m.notify(err.Error(), true)
		return
	}
	m.edit.snapshot(&m.editor)
	m.editor.SetValue(strings.TrimSuffix(string(b), "\n"))
	m.updateMenu()
}
