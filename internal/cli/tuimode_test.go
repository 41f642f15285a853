package cli

import (
	"strings"
	"testing"
)

// The interactive UI opens only without -p and --mode, with a terminal on
// both stdin and stdout; its flags are checked.
func TestInteractiveSelection(t *testing.T) {
	tty := IO{StdinIsTTY: true, StdoutIsTTY: true}
	cases := []struct {
		args []string
		io   IO
		want bool
	}{
		{nil, tty, true},
		{[]string{"hello", "--tui-mode", "inline"}, tty, true},
		{[]string{"-p", "hello"}, tty, false},
		{[]string{"--mode", "text", "hello"}, tty, false},
		{[]string{"--mode", "rpc"}, tty, false},
		{[]string{"hello"}, IO{StdinIsTTY: true}, false},
		{[]string{"hello"}, IO{StdoutIsTTY: true}, false},
		{[]string{"--list-models"}, tty, false},
	}
	for _, c := range cases {
		a, err := ParseArgs(c.args)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if got := interactive(a, c.io); got != c.want {
			t.Errorf("%v (stdin tty %v, stdout tty %v): interactive %v, want %v", c.args, c.io.StdinIsTTY, c.io.StdoutIsTTY, got, c.want)
		}
	}
	for _, bad := range [][]string{{"--tui-mode", "tiny"}, {"--theme", ""}} {
		if _, err := ParseArgs(bad); err == nil || !strings.Contains(err.Error(), bad[1]) {
			t.Errorf("%v: err = %v, want one naming %q", bad, err, bad[1])
		}
	}
	a, err := ParseArgs([]string{"--theme", "light", "--tui-mode", "inline", "--no-themes"})
	if err != nil || a.Theme != "light" || a.TUIMode != "inline" || !a.NoThemes {
		t.Errorf("flags: %+v, %v", a, err)
	}
}
