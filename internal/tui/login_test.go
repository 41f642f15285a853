package tui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/auth/authtest"
	"github.com/pisces-agent/pisces/internal/models"
)

// loginDriver is a UI whose registry keeps auth.json in the agent dir and
// logs in against the fake vendor.
func loginDriver(t *testing.T) (*driver, *authtest.Server, *[]string) {
	srv := authtest.New(t)
	var opened []string
	d := newDriverWith(t, replyScript, func(o *Options) {
		o.OpenURL = func(u string) { opened = append(opened, u) }
	}, driverSetup{registry: func(agentDir string) *models.Registry {
		store := auth.Open(filepath.Join(agentDir, "auth.json"), &auth.Options{Server: srv.URL, AnyCallbackPort: true})
		reg, _ := models.Load(models.LoadOptions{AgentDir: agentDir, Auth: store, Env: func(string) string { return "" }})
		t.Cleanup(reg.Close)
		return reg
	}})
	return d, srv, &opened
}

func storedAuth(t *testing.T, d *driver) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(d.dir, "agent", "auth.json"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	return m
}

// /login: the provider list, the address shown (and handed to the
// browser opener), the code pasted into the view's field; /logout: the
// list of logins, then the entry is gone.
func TestLoginAndLogout(t *testing.T) {
	d, srv, opened := loginDriver(t)
	d.typeText("/login")
	d.key("enter")
	d.waitFor("the provider list", d.contains("Select provider to log in"))
	if s := d.screen(); !strings.Contains(s, "Anthropic (Claude Pro/Max)") || !strings.Contains(s, "GitHub Copilot") {
		t.Fatalf("provider list:\n%s", s)
	}
	d.key("enter") // the first: Anthropic
	d.waitFor("the question", func() bool { return d.m.login != nil && d.m.login.answer != nil })
	s := d.screen()
	for _, want := range []string{"Log in to Anthropic", "Open this address to log in:", "/oauth/authorize?", "paste the redirect URL or code", "escape cancels"} {
		if !strings.Contains(s, want) {
			t.Fatalf("login view lacks %q:\n%s", want, s)
		}
	}
	if len(*opened) != 1 || !strings.Contains((*opened)[0], "/oauth/authorize?") {
		t.Fatalf("browser opened %q", *opened)
	}
	// The person logs in; the vendor's page shows code#state.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get((*opened)[0])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	d.send(tea.PasteMsg{Content: loc.Query().Get("code") + "#" + loc.Query().Get("state")})
	d.key("enter")
	d.waitFor("the login", d.contains("Logged in to Anthropic"))
	if d.m.login != nil {
		t.Fatal("the login view is still open")
	}
	a := storedAuth(t, d)["anthropic"]
	if a["type"] != "oauth" || !srv.Live(a["refresh"].(string)) {
		t.Fatalf("stored %v", a)
	}
	// The model list has Anthropic's models now.
	found := false
	for _, it := range d.m.sess.Models().Available() {
		found = found || it.Provider == "anthropic"
	}
	if !found {
		t.Fatal("no anthropic model available after the login")
	}

	d.typeText("/logout")
	d.key("enter")
	d.waitFor("the logins", d.contains("Select provider to log out"))
	d.key("enter")
	d.waitFor("the logout", d.contains("Logged out of anthropic"))
	if _, ok := storedAuth(t, d)["anthropic"]; ok {
		t.Fatal("the login is still stored")
	}
	d.typeText("/logout")
	d.key("enter")
	d.waitFor("no logins", d.contains("No subscription logins stored"))
}

// Escape cancels a login waiting for an answer; nothing is stored.
func TestLoginCancel(t *testing.T) {
	d, _, _ := loginDriver(t)
	d.typeText("/login github-copilot")
	d.key("enter")
	d.waitFor("the domain question", func() bool { return d.m.login != nil && d.m.login.answer != nil })
	if s := d.screen(); !strings.Contains(s, "Log in to GitHub Copilot") {
		t.Fatalf("screen:\n%s", s)
	}
	d.key("esc")
	d.waitFor("the cancellation", d.contains("Login cancelled"))
	if d.m.login != nil {
		t.Fatal("the login view is still open")
	}
	if a := storedAuth(t, d); a["github-copilot"] != nil {
		t.Fatalf("stored %v", a)
	}
	// The editor is back.
	d.typeText("hello")
	if got := d.m.editor.Value(); got != "hello" {
		t.Fatalf("editor %q", got)
	}
}
