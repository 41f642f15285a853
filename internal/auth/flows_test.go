package auth

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/auth/authtest"
)

// testOptions points the flows at the fake vendor, with a clock that
// advances by what the flow sleeps (no real waiting) and a free callback
// port.
func testOptions(srv *authtest.Server) (*Options, *[]time.Duration) {
	var mu sync.Mutex
	now := time.Now()
	var sleeps []time.Duration
	o := &Options{
		Server:          srv.URL,
		AnyCallbackPort: true,
		Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return now
		},
		Sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			sleeps = append(sleeps, d)
			now = now.Add(d)
			return ctx.Err()
		},
	}
	return o, &sleeps
}

// browser plays the user's browser: it follows the authorize URL's
// redirect to the loopback callback.
func browser(t *testing.T, done chan<- error) func(string) {
	return func(u string) {
		go func() {
			resp, err := http.Get(u)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = &httpError{Status: resp.StatusCode, URL: u}
				}
			}
			done <- err
		}()
	}
}

func TestAnthropicBrowserLogin(t *testing.T) {
	srv := authtest.New(t)
	o, _ := testOptions(srv)
	browsed := make(chan error, 1)
	var authURL string
	ui := &LoginUI{OpenURL: func(u string) { authURL = u; browser(t, browsed)(u) }}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := anthropicProvider{}.Login(ctx, o, ui)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-browsed; err != nil {
		t.Fatalf("browser: %v", err)
	}
	if c.Type != TypeOAuth || !strings.HasPrefix(c.Access, "sk-ant-oat01-") || !srv.Live(c.Refresh) {
		t.Fatalf("credential %+v", c)
	}
	// expires = now + expires_in - 5 min
	if want := o.Now().UnixMilli() + 3600_000 - 300_000; c.Expires != want {
		t.Errorf("expires %d, want %d", c.Expires, want)
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	if q.Get("state") == "" || q.Get("code") != "true" || !strings.Contains(q.Get("scope"), "user:inference") ||
		!strings.HasPrefix(q.Get("redirect_uri"), "http://localhost:") || !strings.HasSuffix(q.Get("redirect_uri"), "/callback") {
		t.Errorf("authorize query %v", q)
	}
	// The exchange was JSON, with the state (the verifier) and the same
	// redirect_uri.
	var ex *authtest.Request
	for _, r := range srv.Requests() {
		if r.Path == "/v1/oauth/token" {
			ex = &r
		}
	}
	if ex == nil || ex.ContentType != "application/json" || ex.Body["state"] != q.Get("state") ||
		ex.Body["code_verifier"] != q.Get("state") || ex.Body["redirect_uri"] != q.Get("redirect_uri") {
		t.Fatalf("exchange %+v", ex)
	}
}

func TestAnthropicCopyCodeLogin(t *testing.T) {
	srv := authtest.New(t)
	o, _ := testOptions(srv)
	// No browser: the user opens the URL elsewhere and pastes code#state
	// from Anthropic's page. Here the fake server's redirect is read
	// without following it.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var pasted string
	var prompts []string
	ui := &LoginUI{
		NoBrowser: true,
		OpenURL: func(u string) {
			resp, err := noFollow.Get(u)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if got := loc.Scheme + "://" + loc.Host + loc.Path; got != anthropicCopyRedirect {
				t.Errorf("redirect_uri %s, want %s", got, anthropicCopyRedirect)
			}
			pasted = loc.Query().Get("code") + "#" + loc.Query().Get("state")
		},
		Prompt: func(ctx context.Context, q string) (string, error) {
			prompts = append(prompts, q)
			if len(prompts) == 1 {
				return "wrong#state", nil // another attempt's code is refused
			}
			return pasted, nil
		},
	}
	c, err := anthropicProvider{}.Login(t.Context(), o, ui)
	if err != nil {
		t.Fatal(err)
	}
	if !srv.Live(c.Refresh) || len(prompts) != 2 {
		t.Fatalf("credential %+v after %d prompts", c, len(prompts))
	}
}

func TestCodexBrowserLogin(t *testing.T) {
	srv := authtest.New(t)
	o, _ := testOptions(srv)
	browsed := make(chan error, 1)
	c, err := codexProvider{}.Login(t.Context(), o, &LoginUI{OpenURL: browser(t, browsed)})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-browsed; err != nil {
		t.Fatal(err)
	}
	if c.AccountID != "acct-123" || !srv.Live(c.Refresh) {
		t.Fatalf("credential %+v", c)
	}
	if want := o.Now().UnixMilli() + 3600_000; c.Expires != want {
		t.Errorf("expires %d, want %d (no margin)", c.Expires, want)
	}
	for _, r := range srv.Requests() {
		if r.Path == "/oauth/authorize" && (r.Query.Get("originator") != "pi" || r.Query.Get("codex_cli_simplified_flow") != "true" || len(r.Query.Get("state")) != 32) {
			t.Errorf("authorize query %v", r.Query)
		}
		if r.Path == "/oauth/token" && r.ContentType != "application/x-www-form-urlencoded" {
			t.Errorf("token request %+v", r)
		}
	}
}

func TestCodexDeviceLogin(t *testing.T) {
	srv := authtest.New(t)
	srv.Set(func(s *authtest.Server) { s.SlowDown, s.Pending = 1, 2 })
	o, sleeps := testOptions(srv)
	var shown []string
	c, err := codexProvider{}.Login(t.Context(), o, &LoginUI{NoBrowser: true, Show: func(m string) { shown = append(shown, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if c.AccountID != "acct-123" || !srv.Live(c.Refresh) {
		t.Fatalf("credential %+v", c)
	}
	if len(shown) != 1 || !strings.Contains(shown[0], "ABCD-1234") || !strings.Contains(shown[0], "https://auth.openai.com/codex/device") {
		t.Errorf("shown %q", shown)
	}
	// interval "5" (a string), then +5 s after slow_down.
	want := []time.Duration{5 * time.Second, 10 * time.Second, 10 * time.Second, 10 * time.Second}
	if len(*sleeps) != len(want) {
		t.Fatalf("sleeps %v, want %v", *sleeps, want)
	}
	for i := range want {
		if (*sleeps)[i] != want[i] {
			t.Fatalf("sleeps %v, want %v", *sleeps, want)
		}
	}
}

func TestCopilotLoginAndRefresh(t *testing.T) {
	srv := authtest.New(t)
	srv.Set(func(s *authtest.Server) {
		s.SlowDown, s.Pending = 1, 1
		s.Models = []string{"gpt-4.1", "claude-sonnet-4", "other"}
		s.Unconfigured = []string{"claude-sonnet-4", "other"}
	})
	o, sleeps := testOptions(srv)
	o.CopilotCatalogue = []string{"gpt-4.1", "claude-sonnet-4"}
	ui := &LoginUI{NoBrowser: true, Prompt: func(context.Context, string) (string, error) { return "", nil }}
	c, err := copilotProvider{}.Login(t.Context(), o, ui)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Access, "tid=") || !srv.Live(c.Refresh) || c.EnterpriseURL != "" {
		t.Fatalf("credential %+v", c)
	}
	if c.Expires != 4102444800_000-300_000 {
		t.Errorf("expires %d", c.Expires)
	}
	if strings.Join(c.AvailableModelIDs, ",") != "gpt-4.1,claude-sonnet-4,other" {
		t.Errorf("models %v", c.AvailableModelIDs)
	}
	// The catalogue's unconfigured model was turned on; the unknown one not.
	var enabled []string
	srv.Set(func(s *authtest.Server) { enabled = append(enabled, s.Enabled...) })
	if strings.Join(enabled, ",") != "claude-sonnet-4" {
		t.Errorf("enabled %v", enabled)
	}
	// One interval before the first poll; slow_down's interval (10 s) after.
	if len(*sleeps) != 3 || (*sleeps)[0] != 5*time.Second || (*sleeps)[1] != 10*time.Second {
		t.Errorf("sleeps %v", *sleeps)
	}
	// The refresh keeps the GitHub token and rewrites the model list; a
	// failed model list fails the whole refresh.
	srv.Set(func(s *authtest.Server) { s.Models = []string{"gpt-5"} })
	n, err := copilotProvider{}.Refresh(t.Context(), o, c)
	if err != nil {
		t.Fatal(err)
	}
	if n.Refresh != c.Refresh || n.Access == c.Access || strings.Join(n.AvailableModelIDs, ",") != "gpt-5" {
		t.Fatalf("refreshed %+v", n)
	}
	srv.Set(func(s *authtest.Server) { s.FailModels = true })
	if _, err := (copilotProvider{}).Refresh(t.Context(), o, c); err == nil || !strings.Contains(err.Error(), "models") {
		t.Fatalf("refresh with a failing model list: %v", err)
	}
}

func TestCopilotBaseURL(t *testing.T) {
	for _, tc := range []struct{ token, ent, want string }{
		{"tid=1;proxy-ep=proxy.individual.githubcopilot.com;x=1", "", "https://api.individual.githubcopilot.com"},
		{"tid=1;proxy-ep=proxy.business.githubcopilot.com", "ghe.example.com", "https://api.business.githubcopilot.com"},
		{"tid=1", "ghe.example.com", "https://copilot-api.ghe.example.com"},
		{"tid=1", "", "https://api.individual.githubcopilot.com"},
	} {
		if got := CopilotBaseURL(tc.token, tc.ent); got != tc.want {
			t.Errorf("CopilotBaseURL(%q, %q) = %s, want %s", tc.token, tc.ent, got, tc.want)
		}
	}
}

func TestParseCodeInput(t *testing.T) {
	for _, tc := range []struct{ in, code, state string }{
		{"http://localhost:1455/auth/callback?code=abc&state=xyz", "abc", "xyz"},
		{"abc#xyz", "abc", "xyz"},
		{"code=abc&state=xyz", "abc", "xyz"},
		{"  abc \n", "abc", ""},
		{"", "", ""},
	} {
		code, state := parseCodeInput(tc.in)
		if code != tc.code || state != tc.state {
			t.Errorf("parseCodeInput(%q) = %q, %q", tc.in, code, state)
		}
	}
}

// TestChatGPTLogin: Sign in with ChatGPT registers a client per login
// (named in the redirect), exchanges for the API resource, stores the
// client and scopes, and refreshes with that client.
func TestChatGPTLogin(t *testing.T) {
	srv := authtest.New(t)
	o, _ := testOptions(srv)
	o.DeviceID = func() (string, error) { return "0b7c2d4e-1111-4222-8333-944455556666", nil }
	browsed := make(chan error, 1)
	c, err := chatgptProvider{}.Login(t.Context(), o, &LoginUI{OpenURL: browser(t, browsed)})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-browsed; err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.ClientID, "client-issued-") || !srv.Live(c.Refresh) || !strings.Contains(strings.Join(c.Scopes, " "), "chatgpt.tokens.use.direct") {
		t.Fatalf("credential %+v", c)
	}
	if want := o.Now().UnixMilli() + 3600_000 - 180_000; c.Expires != want {
		t.Errorf("expires %d, want %d", c.Expires, want)
	}
	for _, r := range srv.Requests() {
		if r.Path == "/api/accounts/authorize" && (r.Query.Get("ext_agent_host_id") != "urn:uuid:0b7c2d4e-1111-4222-8333-944455556666" ||
			!strings.HasPrefix(r.Query.Get("redirect_uri"), "http://127.0.0.1:") || r.Query.Get("agent_name_hint") != "Pi") {
			t.Errorf("authorize query %v", r.Query)
		}
	}
	n, err := chatgptProvider{}.Refresh(t.Context(), o, c)
	if err != nil {
		t.Fatal(err)
	}
	if n.ClientID != c.ClientID || n.Refresh == c.Refresh || srv.Live(c.Refresh) || !srv.Live(n.Refresh) {
		t.Fatalf("refreshed %+v", n)
	}
	// Without a deviceId there is no login.
	o.DeviceID = nil
	if _, err := (chatgptProvider{}).Login(t.Context(), o, &LoginUI{}); err == nil {
		t.Fatal("login without a deviceId")
	}
}
