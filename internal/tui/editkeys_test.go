package tui

import (
	"os"
	"path/filepath"
	"testing"
)

func editorIs(t *testing.T, d *driver, want string) {
	t.Helper()
	if got := d.m.editor.Value(); got != want {
		t.Fatalf("editor %q, want %q", got, want)
	}
}

// The kill ring: consecutive word kills make one entry, yank puts the
// newest back, yank-pop replaces it with the one before; undo steps back.
func TestEditorKillRingAndUndo(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	d.typeText("alpha beta gamma")
	d.key("ctrl+w")
	editorIs(t, d, "alpha beta ")
	d.key("ctrl+w")
	editorIs(t, d, "alpha ")
	d.key("ctrl+y")
	editorIs(t, d, "alpha beta gamma")

	d.key("ctrl+a") // line start (ends the run of kills)
	d.key("ctrl+k") // a second entry: the whole line
	editorIs(t, d, "")
	d.typeText("x ")
	d.key("ctrl+y")
	editorIs(t, d, "x alpha beta gamma")
	d.key("alt+y")
	editorIs(t, d, "x beta gamma")
	d.key("alt+y")
	editorIs(t, d, "x alpha beta gamma")

	// Undo: the yank-pops, the yank, then the typing (a space goes with
	// the word after it; a word's characters go together).
	d.key("ctrl+-")
	editorIs(t, d, "x beta gamma")
	d.key("ctrl+-")
	editorIs(t, d, "x alpha beta gamma")
	d.key("ctrl+-")
	editorIs(t, d, "x ")
	d.key("ctrl+-")
	editorIs(t, d, "x")
	d.key("ctrl+-")
	editorIs(t, d, "")
}

// Jump to a character forward and backward; cursor movement keys.
func TestEditorJumpAndMovement(t *testing.T) {
	d := newDriver(t, replyScript, nil)
	d.typeText("hello world")
	d.key("ctrl+a")
	d.key("ctrl+]")
	d.typeText("w")
	d.typeText("X")
	editorIs(t, d, "hello Xworld")
	d.key("ctrl+e")
	d.key("ctrl+alt+]")
	d.typeText("l")
	d.typeText("Y")
	editorIs(t, d, "hello XworYld")
	d.key("ctrl+b")
	d.key("ctrl+b")
	d.key("ctrl+d") // delete forward (the editor is not empty: no exit)
	editorIs(t, d, "hello XwoYld")
	d.key("alt+b")
	d.typeText("_")
	editorIs(t, d, "hello _XwoYld")
}

// Editor keys follow keybindings.json (pi's ids and older names); pi's
// actions without a counterpart are accepted.
func TestEditorKeysRebound(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"tui.editor.cursorLineStart": "ctrl+x", "deleteWordBackward": ["alt+w"], "app.suspend": "ctrl+z",
	"tui.editor.yank": "shift+ctrl+y"}`
	if err := os.WriteFile(filepath.Join(dir, "keybindings.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	km, err := LoadKeymap(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, replyScript, func(o *Options) { o.Keys = km })
	d.typeText("abc def")
	d.key("ctrl+a") // no longer line start
	d.typeText("1")
	editorIs(t, d, "abc def1")
	d.key("ctrl+x")
	d.typeText("2")
	editorIs(t, d, "2abc def1")
	d.key("end")
	d.key("ctrl+w") // unbound now
	editorIs(t, d, "2abc def1")
	d.key("alt+w")
	editorIs(t, d, "2abc ")
	d.key("ctrl+y")
	editorIs(t, d, "2abc ")
	d.key("ctrl+shift+y")
	editorIs(t, d, "2abc def1")

	if err := os.WriteFile(filepath.Join(dir, "keybindings.json"), []byte(`{"tui.editor.cursorLeft": "hyper+q+x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKeymap(dir); err == nil {
		t.Fatal("a key with an unknown modifier was accepted")
	}
}
