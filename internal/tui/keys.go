package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
)

var defaultBindings = map[string][]string{
	actInterrupt:    {"esc"},
	actClear:        {"ctrl+c"},
	actExit:         {"ctrl+d"},
	actExpandTools:  {"ctrl+o"},
	actToggleThink:  {"ctrl+t"},
	actCycleThink:   {"shift+tab"},
	actCycleModel:   {"ctrl+p"},
	actSelectModel:  {"ctrl+l"},
	actFollowUp:     {"alt+enter"},
	actDequeue:      {"alt+up"},
	actSubmit:       {"enter"},
	actNewLine:      {"shift+enter", "ctrl+j"},
	actPageUp:       {"pgup"},
	actPageDown:     {"pgdown"},
	actTree:         nil,
	actNewSession:   nil,
	actResume:       nil,
	actForkSession:  nil,
	actSelectUp:     {"up"},
	actSelectDown:   {"down"},
	actSelectOK:     {"enter"},
	actSelectCancel: {"esc", "ctrl+c"},
}

// legacyNames are pi's earlier action names.
var legacyNames = map[string]string{
	"interrupt": actInterrupt, "clear": actClear, "exit": actExit, "expandTools": actExpandTools,
	"toggleThinking": actToggleThink, "cycleThinkingLevel": actCycleThink, "cycleModelForward": actCycleModel,
	"selectModel": actSelectModel, "followUp": actFollowUp, "dequeue": actDequeue, "submit": actSubmit,
	"newLine": actNewLine, "pageUp": actPageUp, "pageDown": actPageDown, "tree": actTree,
	"newSession": actNewSession, "resume": actResume, "fork": actForkSession,
	"selectUp": actSelectUp, "selectDown": actSelectDown, "selectConfirm": actSelectOK, "selectCancel": actSelectCancel,
}

// Keymap maps key names (as the terminal library spells them: "ctrl+c",
// "alt+enter", "esc", "pgup") to actions.
type Keymap struct {
	bindings map[string][]string // action → keys
}

// normalizeKey turns pi's key syntax into the library's names.
func normalizeKey(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	parts := strings.Split(k, "+")
	last := parts[len(parts)-1]
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
	parts[len(parts)-1] = last
	return strings.Join(parts, "+")
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
			keys[i] = normalizeKey(keys[i])
		}
		km.bindings[action] = keys
	}
	return km, nil
}

// is reports whether key is bound to action.
func (km *Keymap) is(key, action string) bool {
	for _, k := range km.bindings[action] {
		if k == key {
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
