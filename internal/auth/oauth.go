package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Provider is a subscription login: how to log in and how to refresh.
type Provider interface {
	// ID is the provider's key in auth.json and its model provider name.
	ID() string
	// Name is what a picker shows.
	Name() string
	// Login runs the login flow and returns the credential to store.
	Login(ctx context.Context, o *Options, ui *LoginUI) (*Credential, error)
	// Refresh exchanges the stored credential for a new one, which
	// replaces the whole entry.
	Refresh(ctx context.Context, o *Options, c *Credential) (*Credential, error)
}

// Providers are the logins Pisces supports, in picker order.
func Providers() []Provider {
	return []Provider{anthropicProvider{}, codexProvider{}, copilotProvider{}, chatgptProvider{}}
}

// Lookup returns the login of a provider id.
func Lookup(id string) (Provider, bool) {
	for _, p := range Providers() {
		if p.ID() == id {
			return p, true
		}
	}
	return nil, false
}

// Options are the injectable parts of the flows: the HTTP client, where
// the vendor endpoints are, the clock, the callback port. The zero value
// talks to the real vendors.
type Options struct {
	HTTPClient *http.Client
	// Server, when set, replaces the scheme and host of every vendor URL
	// (the paths stay). For tests only: see ServerEnv.
	Server string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Sleep waits between device-code polls (default: a timer, cut short
	// by ctx).
	Sleep func(ctx context.Context, d time.Duration) error
	// CallbackHost is the address loopback callback servers bind
	// (default $PI_OAUTH_CALLBACK_HOST, else 127.0.0.1).
	CallbackHost string
	// AnyCallbackPort binds loopback callback servers to a free port
	// instead of the vendor's (tests).
	AnyCallbackPort bool
	// Originator is the Codex "originator" value (default "pi": the
	// Codex backend knows the client by it).
	Originator string
	// CopilotCatalogue are the GitHub Copilot model ids Pisces knows; a
	// Copilot login turns on those the account has not configured yet.
	CopilotCatalogue []string
	// DeviceID returns this installation's id for Sign in with ChatGPT
	// (the global settings' deviceId, created when missing).
	DeviceID func() (string, error)
}

// ServerEnv names the test-only environment variable that points every
// vendor URL at one local server (e.g. http://127.0.0.1:8080). It exists
// so that tests can run the login and refresh of separate pisces
// processes against a local server; it is not a user setting.
const ServerEnv = "PISCES_TEST_OAUTH_SERVER"

// OptionsFromEnv returns the options of a pisces process: the callback
// host of PI_OAUTH_CALLBACK_HOST and the test-only ServerEnv.
func OptionsFromEnv() *Options {
	return &Options{Server: os.Getenv(ServerEnv), CallbackHost: os.Getenv("PI_OAUTH_CALLBACK_HOST")}
}

func (o *Options) client() *http.Client {
	if o != nil && o.HTTPClient != nil {
		return o.HTTPClient
	}
	return http.DefaultClient
}

func (o *Options) now() time.Time {
	if o != nil && o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) sleep(ctx context.Context, d time.Duration) error {
	if o != nil && o.Sleep != nil {
		return o.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (o *Options) callbackHost() string {
	if o != nil && o.CallbackHost != "" {
		return o.CallbackHost
	}
	return "127.0.0.1"
}

// url rewrites a vendor URL for the test server, if one is set.
func (o *Options) url(raw string) string {
	if o == nil || o.Server == "" {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	s, err := url.Parse(o.Server)
	if err != nil {
		return raw
	}
	u.Scheme, u.Host = s.Scheme, s.Host
	if u.Scheme == "wss" || u.Scheme == "ws" {
		u.Scheme = "http"
	}
	return u.String()
}

// LoginUI is how a flow talks to the user. Every field is optional.
type LoginUI struct {
	// NoBrowser picks the method for a machine without a browser: the
	// copy-code or device-code flow.
	NoBrowser bool
	// OpenURL shows an authorization URL and opens a browser on it when
	// one exists.
	OpenURL func(url string)
	// Show prints an instruction (a device code and where to enter it).
	Show func(msg string)
	// Prompt asks for one line (a pasted code or redirect URL, an
	// enterprise domain). It returns ctx.Err() when ctx ends first.
	Prompt func(ctx context.Context, question string) (string, error)
}

func (ui *LoginUI) show(msg string) {
	if ui != nil && ui.Show != nil {
		ui.Show(msg)
	}
}

func (ui *LoginUI) open(u string) {
	if ui != nil && ui.OpenURL != nil {
		ui.OpenURL(u)
	}
}

func (ui *LoginUI) prompt(ctx context.Context, q string) (string, error) {
	if ui == nil || ui.Prompt == nil {
		return "", errors.New("this login needs an answer typed by the user, and there is no one to ask")
	}
	return ui.Prompt(ctx, q)
}

// pkce returns a verifier (32 random bytes, base64url) and its S256
// challenge.
func pkce() (verifier, challenge string) {
	verifier = randomB64(32)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

func randomB64(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

// httpError is a non-2xx answer of a vendor endpoint.
type httpError struct {
	Status int
	Body   string
	URL    string
}

func (e *httpError) Error() string {
	body := strings.TrimSpace(e.Body)
	if len(body) > 300 {
		body = body[:300] + "…"
	}
	return fmt.Sprintf("%s answered %d: %s", e.URL, e.Status, body)
}

// oauthErrorCode is the "error" field of an OAuth error body.
func (e *httpError) oauthErrorCode() string {
	var b struct {
		Error any `json:"error"`
	}
	_ = json.Unmarshal([]byte(e.Body), &b)
	switch v := b.Error.(type) {
	case string:
		return v
	case map[string]any:
		if c, ok := v["code"].(string); ok {
			return c
		}
	}
	return ""
}

// do sends a request and decodes a 2xx JSON answer into out.
func do(ctx context.Context, o *Options, req *http.Request, out any) error {
	req = req.WithContext(ctx)
	resp, err := o.client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &httpError{Status: resp.StatusCode, Body: string(body), URL: req.URL.Scheme + "://" + req.URL.Host + req.URL.Path}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s: the answer is not the JSON expected: %v", req.URL.Path, err)
	}
	return nil
}

func postJSON(ctx context.Context, o *Options, u string, body any, headers map[string]string, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, o.url(u), bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return do(ctx, o, req, out)
}

func postForm(ctx context.Context, o *Options, u string, form url.Values, headers map[string]string, out any) error {
	req, err := http.NewRequest(http.MethodPost, o.url(u), strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return do(ctx, o, req, out)
}

// tokenResponse is an OAuth token endpoint's answer.
type tokenResponse struct {
	AccessToken  string   `json:"access_token"`
	RefreshToken string   `json:"refresh_token"`
	ExpiresIn    *float64 `json:"expires_in"`
	IDToken      string   `json:"id_token"`
	Scope        string   `json:"scope"`
}

func (t *tokenResponse) check(needRefresh bool) error {
	switch {
	case t.AccessToken == "":
		return errors.New("the token answer has no access_token")
	case needRefresh && t.RefreshToken == "":
		return errors.New("the token answer has no refresh_token")
	case t.ExpiresIn == nil:
		return errors.New("the token answer has no numeric expires_in")
	}
	return nil
}

// expiresAt is now + expires_in minus margin, in Unix ms.
func (t *tokenResponse) expiresAt(o *Options, margin time.Duration) int64 {
	return o.now().UnixMilli() + int64(*t.ExpiresIn*1000) - margin.Milliseconds()
}

// parseCodeInput reads what a user pastes: a redirect URL, "code#state",
// "code=…&state=…" or a bare code.
func parseCodeInput(s string) (code, state string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", ""
	}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		q := u.Query()
		return q.Get("code"), q.Get("state")
	}
	if c, st, ok := strings.Cut(s, "#"); ok {
		return c, st
	}
	if strings.Contains(s, "code=") {
		q, err := url.ParseQuery(s)
		if err == nil {
			return q.Get("code"), q.Get("state")
		}
	}
	return s, ""
}
