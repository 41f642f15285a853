package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitLimit bounds the waits of the web mode tests: generous, for a loaded
// machine.
const waitLimit = 30 * time.Second

// Web mode refuses the setups its security model rules out, before it
// listens.
func TestWebModeRefusals(t *testing.T) {
	w := newWorld(t)
	t.Setenv("PISCES_WEB_TOKEN", "")
	empty := w.file("empty-token", "\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--host", "0.0.0.0"}, "give the token yourself (PISCES_WEB_TOKEN or --web-token-file)"},
		{[]string{"--host", "192.0.2.1", "--web-no-token"}, "--web-no-token is refused with the non-loopback host 192.0.2.1"},
		{[]string{"--web-token-file", empty}, "is empty"},
		{[]string{"--web-token-file", filepath.Join(w.root, "missing")}, "--web-token-file"},
		{[]string{"--port", "70000"}, "Invalid --port"},
		{[]string{"--resume"}, "--resume picks a session in a terminal; in web mode"},
		{[]string{"hello"}, "not accepted in web mode"},
	}
	for _, c := range cases {
		r := w.run("", append([]string{"--mode", "web"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 with %q", c.args, r.code, r.stderr, r.stdout, c.want)
		}
	}
	t.Setenv("PISCES_WEB_TOKEN", "a-token-of-the-owner-0123")
	r := w.run("", "--mode", "web", "--host", "0.0.0.0", "--web-no-token")
	if r.code != 2 || !strings.Contains(r.stderr, "cannot be combined with a token") {
		t.Errorf("--web-no-token with a token: %d %q", r.code, r.stderr)
	}
}
