package webui_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/auth/authtest"
)

// TestBrowserLogin logs in to GitHub Copilot from the page, as a person on
// a machine other than the server's would: the device flow runs on the
// server against a local server speaking GitHub's and Copilot's wire, the
// page shows the enterprise question, then the code and the address as a
// link; once the vendor confirms, the provider is listed as logged in, its
// model is in the model picker, and logging out takes it away again; a
// login cancelled from the page ends.
func TestBrowserLogin(t *testing.T) {
	vendor := authtest.New(t)
	// The vendor answers authorization_pending until the test has seen
	// the code on the page.
	vendor.Set(func(s *authtest.Server) { s.Interval, s.Pending, s.Models = 1, 1<<30, []string{"kimi-k3"} })
	t.Setenv(auth.ServerEnv, vendor.URL)
	for _, v := range []string{"GITHUB_TOKEN", "GH_TOKEN", "COPILOT_GITHUB_TOKEN"} {
		t.Setenv(v, "")
	}
	srv := startServer(t)
	b := startBrowser(t)
	b.do("opening the UI", chromedp.Navigate(srv.url))
	b.waitFor("the connection", `!document.querySelector('.banner') && !!document.querySelector('.picker')`)

	const copilot = `[data-testid=login-provider][data-provider=github-copilot]`
	b.do("opening the logins", chromedp.Click(chromedp.CSS(`[data-testid=open-login]`)))
	b.waitFor("the provider list", `!!document.querySelector('`+copilot+`[data-authenticated=no]')`)
	b.screenshot("logins")
	b.do("logging in", chromedp.Click(chromedp.CSS(copilot+` [data-testid=login]`)))
	b.waitFor("the enterprise question", `!!document.querySelector('[data-testid=login-input]')`)
	b.do("answering blank (github.com)", chromedp.Click(chromedp.CSS(`[data-testid=login-submit]`)))
	b.waitFor("the device code and the address",
		`[...document.querySelectorAll('[data-testid=login-note]')].some(n => n.innerText.includes('WXYZ-9876')) && `+
			`document.querySelector('[data-testid=login-url]')?.getAttribute('href') === 'https://github.com/login/device'`)
	b.screenshot("device-code")

	vendor.Set(func(s *authtest.Server) { s.Pending = 0 })
	b.waitFor("the login", `!!document.querySelector('`+copilot+`[data-authenticated=yes]')`)
	b.waitFor("the account's model in the picker", `[...document.querySelectorAll('.picker option')].some(o => o.value === 'github-copilot/kimi-k3')`)
	b.screenshot("logged-in")
	data, err := os.ReadFile(filepath.Join(srv.agentDir, "auth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stored map[string]struct {
		Type              string   `json:"type"`
		AvailableModelIDs []string `json:"availableModelIds"`
	}
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}
	if c := stored["github-copilot"]; c.Type != "oauth" || strings.Join(c.AvailableModelIDs, ",") != "kimi-k3" {
		t.Errorf("auth.json after the login: %s", data)
	}

	b.do("logging out", chromedp.Click(chromedp.CSS(copilot+` [data-testid=logout]`)))
	b.waitFor("the logout", `!!document.querySelector('`+copilot+`[data-authenticated=no]')`)
	b.waitFor("the model gone from the picker", `![...document.querySelectorAll('.picker option')].some(o => o.value === 'github-copilot/kimi-k3')`)

	// A login cancelled from the page ends on the server: the next one
	// starts (a connection runs one login at a time).
	for i := 0; i < 2; i++ {
		b.do("logging in again", chromedp.Click(chromedp.CSS(copilot+` [data-testid=login]`)))
		b.waitFor("the enterprise question again", `!!document.querySelector('[data-testid=login-input]')`)
		b.do("cancelling the login", chromedp.Click(chromedp.CSS(`[data-testid=login-cancel]`)))
		b.waitFor("the list after the cancellation", `!document.querySelector('[data-testid=login-flow]') && !!document.querySelector('`+copilot+`[data-authenticated=no]')`)
	}
}
