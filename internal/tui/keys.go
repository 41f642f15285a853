package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// The actions a key can be bound to, by pi's keybinding ids. pi's older
// camelCase names are accepted for the same actions.
const (
	actInterrupt    = "app.interrupt"
	actClear        = "app.clear"
	actExit         = "app.exit"
	actExpandTools  = "app.tools.expand"
	actToggleThink  = "app.thinking.toggle"
	actCycleThink   = "app.thinking.cycle"
	actCycleModel   = "app.model.cycleForward"
	actSelectModel  = "app.model.select"
	actFollowUp     = "app.message.followUp"
	actDequeue      = "app.message.dequeue"
	actSubmit       = "tui.input.submit"
	actNewLine      = "tui.input.newLine"
	actPageUp       = "tui.editor.pageUp"
	actPageDown     = "tui.editor.pageDown"
	actTree         = "app.session.tree"
	actNewSession   = "app.session.new"
	actResume       = "app.session.resume"
	actForkSession  = "app.session.fork"
	actSelectUp     = "tui.select.up"
	actSelectDown   = "tui.select.down"
	actSelectOK     = "tui.select.confirm"
	actSelectCancel = "tui.select.cancel"
	actSelectPgUp   = "tui.select.pageUp"
	actSelectPgDown = "tui.select.pageDown"
	actTab          = "tui.input.tab"
	actExternal     = "app.editor.external"
	// Keys of the session list (/resume).
	actRenameSession = "app.session.rename"
	actDeleteSession = "app.session.delete"

	// The editor's own keys.
	actCursorUp       = "tui.editor.cursorUp"
	actCursorDown     = "tui.editor.cursorDown"
	actCursorLeft     = "tui.editor.cursorLeft"
	actCursorRight    = "tui.editor.cursorRight"
	actWordLeft       = "tui.editor.cursorWordLeft"
	actWordRight      = "tui.editor.cursorWordRight"
	actLineStart      = "tui.editor.cursorLineStart"
	actLineEnd        = "tui.editor.cursorLineEnd"
	actJumpForward    = "tui.editor.jumpForward"
	actJumpBackward   = "tui.editor.jumpBackward"
	actDelCharBack    = "tui.editor.deleteCharBackward"
	actDelCharForward = "tui.editor.deleteCharForward"
	actDelWordBack    = "tui.editor.deleteWordBackward"
	actDelWordForward = "tui.editor.deleteWordForward"
	actDelToLineStart = "tui.editor.deleteToLineStart"
	actDelToLineEnd   = "tui.editor.deleteToLineEnd"
	actYank           = "tui.editor.yank"
	actYankPop        = "tui.editor.yankPop"
	actUndo           = "tui.editor.undo"
)

var defaultBindings = map[string][]string{
	actInterrupt:     {"esc"},
	actClear:         {"ctrl+c"},
	actExit:          {"ctrl+d"},
	actExpandTools:   {"ctrl+o"},
	actToggleThink:   {"ctrl+t"},
	actCycleThink:    {"shift+tab"},
	actCycleModel:    {"ctrl+p"},
	actSelectModel:   {"ctrl+l"},
	actFollowUp:      {"alt+enter"},
	actDequeue:       {"alt+up"},
	actSubmit:        {"enter"},
	actNewLine:       {"shift+enter", "ctrl+j"},
	actPageUp:        {"pgup"},
	actPageDown:      {"pgdown"},
	actTree:          nil,
	actNewSession:    nil,
	actResume:        nil,
	actForkSession:   nil,
	actSelectUp:      {"up"},
	actSelectDown:    {"down"},
	actSelectOK:      {"enter"},
	actSelectCancel:  {"esc", "ctrl+c"},
	actSelectPgUp:    {"pgup"},
	actSelectPgDown:  {"pgdown"},
	actTab:           {"tab"},
	actExternal:      {"ctrl+g"},
	actRenameSession: {"ctrl+r"},
	actDeleteSession: {"ctrl+d"},

	actCursorUp:       {"up"},
	actCursorDown:     {"down"},
	actCursorLeft:     {"left", "ctrl+b"},
	actCursorRight:    {"right", "ctrl+f"},
	actWordLeft:       {"alt+left", "ctrl+left", "alt+b"},
	actWordRight:      {"alt+right", "ctrl+right", "alt+f"},
	actLineStart:      {"home", "ctrl+a"},
	actLineEnd:        {"end", "ctrl+e"},
	actJumpForward:    {"ctrl+]"},
	actJumpBackward:   {"ctrl+alt+]"},
	actDelCharBack:    {"backspace"},
	actDelCharForward: {"delete", "ctrl+d"},
	actDelWordBack:    {"ctrl+w", "alt+backspace"},
	actDelWordForward: {"alt+d", "alt+delete"},
	actDelToLineStart: {"ctrl+u"},
	actDelToLineEnd:   {"ctrl+k"},
	actYank:           {"ctrl+y"},
	actYankPop:        {"alt+y"},
	actUndo:           {"ctrl+-"},
}

// legacyNames are pi's earlier action names.
var legacyNames = map[string]string{
	"interrupt": actInterrupt, "clear": actClear, "exit": actExit, "expandTools": actExpandTools,
	"toggleThinking": actToggleThink, "cycleThinkingLevel": actCycleThink, "cycleModelForward": actCycleModel,
	"selectModel": actSelectModel, "followUp": actFollowUp, "dequeue": actDequeue, "submit": actSubmit,
	"newLine": actNewLine, "pageUp": actPageUp, "pageDown": actPageDown, "tree": actTree,
	"newSession": actNewSession, "resume": actResume, "fork": actForkSession,
	"selectUp": actSelectUp, "selectDown": actSelectDown, "selectConfirm": actSelectOK, "selectCancel": actSelectCancel,
	"selectPageUp": actSelectPgUp, "selectPageDown": actSelectPgDown, "tab": actTab,
	"externalEditor": actExternal,
	"cursorUp":       actCursorUp, "cursorDown": actCursorDown, "cursorLeft": actCursorLeft, "cursorRight": actCursorRight,
	"cursorWordLeft": actWordLeft, "cursorWordRight": actWordRight, "cursorLineStart": actLineStart,
	"cursorLineEnd": actLineEnd, "jumpForward": actJumpForward, "jumpBackward": actJumpBackward,
	"deleteCharBackward": actDelCharBack, "deleteCharForward": actDelCharForward,
	"deleteWordBackward": actDelWordBack, "deleteWordForward": actDelWordForward,
	"deleteToLineStart": actDelToLineStart, "deleteToLineEnd": actDelToLineEnd,
	"yank": actYank, "yankPop": actYankPop, "undo": actUndo,
	"renameSession": actRenameSession, "deleteSession": actDeleteSession,
}

// unsupportedActions are pi's actions this UI has no counterpart for (with
// their older names): a keybindings.json written for pi may bind them, and
// they are accepted and do nothing.
var unsupportedActions = map[string]bool{
	"app.suspend": true, "suspend": true,
	"app.clipboard.pasteImage": true, "pasteImage": true,
	"app.model.cycleBackward": true, "cycleModelBackward": true,
	"tui.input.copy": true, "copy": true,
	"app.session.toggleNamedFilter": true, "toggleSessionNamedFilter": true,
	"app.session.togglePath": true, "toggleSessionPath": true,
	"app.session.toggleSort": true, "toggleSessionSort": true,
	"app.session.deleteNoninvasive": true, "deleteSessionNoninvasive": true,
	"app.tree.foldOrUp": true, "treeFoldOrUp": true,
	"app.tree.unfoldOrDown": true, "treeUnfoldOrDown": true,
	"app.tree.editLabel": true, "treeEditLabel": true,
	"app.tree.toggleLabelTimestamp": true, "treeToggleLabelTimestamp": true,
	"app.models.save": true, "app.models.enableAll": true, "app.models.clearAll": true,
	"app.models.toggleProvider": true, "app.models.reorderUp": true, "app.models.reorderDown": true,
	"app.tree.filter.default": true, "app.tree.filter.noTools": true, "app.tree.filter.userOnly": true,
	"app.tree.filter.labeledOnly": true, "app.tree.filter.all": true,
	"app.tree.filter.cycleForward": true, "app.tree.filter.cycleBackward": true,
}

// Keymap maps key names (as the terminal library spells them: "ctrl+c",
// "alt+enter", "esc", "pgup") to actions.
type Keymap struct {
	bindings map[string][]string // action → keys
}

// modifierOrder is the order in which the terminal library writes
// modifiers ("ctrl+alt+shift+x"); pi accepts them in any order.
var modifierOrder = []string{"ctrl", "alt", "shift", "meta", "hyper", "super"}

// normalizeKey turns pi's key syntax into the library's names.
func normalizeKey(k string) (string, error) {
	k = strings.ToLower(strings.TrimSpace(k))
	if k == "+" || strings.HasSuffix(k, "++") {
		// The key is "+" itself.
		k = strings.TrimSuffix(k, "+") + "plus"
	}
	parts := strings.Split(k, "+")
	last := parts[len(parts)-1]
	if last == "plus" {
		last = "+"
	}
	mods := map[string]bool{}
	for _, p := range parts[:len(parts)-1] {
		if !slices.Contains(modifierOrder, p) {
			return "", fmt.Errorf("%q: unknown modifier %q (ctrl, alt, shift)", k, p)
		}
		mods[p] = true
	}
	parts = parts[:0]
	for _, mod := range modifierOrder {
		if mods[mod] {
			parts = append(parts, mod)
		}
	}
	switch last {
	case "escape":
		last = "esc"
	case "return":
		last = "enter"
	case "pageup":
		last = "pgup"
	case "pagedown":
		last = "pgdown"
	}
	if last == "" {
		return "", fmt.Errorf("%q: no key", k)
	}
	return strings.Join(append(parts, last), "+"), nil
}

// LoadKeymap reads <agentDir>/keybindings.json over the defaults: an object
// from action id to a key or a list of keys. A missing file is no error;
// an unknown action or a bad value is, naming it.
func LoadKeymap(agentDir string) (*Keymap, error) {
	km := &Keymap{bindings: map[string][]string{}}
	for a, ks := range defaultBindings {
		km.bindings[a] = ks
	}
	if agentDir == "" {
		return km, nil
	}
	path := filepath.Join(agentDir, "keybindings.json")
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return km, nil
	}
	if err != nil {
		return km, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return km, fmt.Errorf("%s: %v", path, err)
	}
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		action := name
		if a, ok := legacyNames[name]; ok {
			action = a
		}
		if unsupportedActions[name] {
			continue
		}
		if _, ok := defaultBindings[action]; !ok {
			return km, fmt.Errorf("%s: unknown action %q", path, name)
		}
		var keys []string
		var one string
		if err := json.Unmarshal(raw[name], &one); err == nil {
			keys = []string{one}
		} else if err := json.Unmarshal(raw[name], &keys); err != nil {
			return km, fmt.Errorf("%s: %q: expected a key or a list of keys", path, name)
		}
		for i := range keys {
			k, err := normalizeKey(keys[i])
			if err != nil {
				return km, fmt.Errorf("%s: %q: %v", path, name, err)
			}
			keys[i] = k
		}
		km.bindings[action] = keys
	}
	return km, nil
}

// keyAliases are keys a terminal reports under another name: ctrl+-
// arrives as ctrl+_ (both are 0x1f) unless the terminal reports keys
// fully.
var keyAliases = map[string]string{"ctrl+-": "ctrl+_"}

// is reports whether key is bound to action.
func (km *Keymap) is(key, action string) bool {
	for _, k := range km.bindings[action] {
		if k == key || keyAliases[k] == key {
			return true
		}
	}
	return false
}

// keyOf is the first key of action, for hints ("" when unbound).
func (km *Keymap) keyOf(action string) string {
	if ks := km.bindings[action]; len(ks) > 0 {
		return ks[0]
	}
	return ""
}
