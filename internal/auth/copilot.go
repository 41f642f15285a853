package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// GitHub Copilot: GitHub's device flow gives a GitHub token (stored as
// "refresh", it never changes); "refreshing" exchanges it for a short-lived
// Copilot token and fetches the models the account may use.
const (
	copilotClientID = "Iv1.b507a08c87ecfe98"
	copilotMargin   = 5 * time.Minute
	// CopilotAPIVersion is the X-GitHub-Api-Version of the models call.
	CopilotAPIVersion = "2026-06-01"
)

// CopilotHeaders are the editor headers every Copilot request carries.
var CopilotHeaders = map[string]string{
	"User-Agent":             "GitHubCopilotChat/0.35.0",
	"Editor-Version":         "vscode/1.107.0",
	"Editor-Plugin-Version":  "copilot-chat/0.35.0",
	"Copilot-Integration-Id": "vscode-chat",
}

type copilotProvider struct{}

func (copilotProvider) ID() string   { return "github-copilot" }
func (copilotProvider) Name() string { return "GitHub Copilot" }

// normalizeDomain turns what the user typed ("", "github.com",
// "https://ghe.example.com/") into a host name.
func normalizeDomain(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "github.com", nil
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not a GitHub domain", s)
	}
	return u.Host, nil
}

func (p copilotProvider) Login(ctx context.Context, o *Options, ui *LoginUI) (*Credential, error) {
	domain := "github.com"
	if ui != nil && ui.Prompt != nil {
		answer, err := ui.Prompt(ctx, "GitHub Enterprise domain (blank for github.com):")
		if err != nil {
			return nil, err
		}
		if domain, err = normalizeDomain(answer); err != nil {
			return nil, err
		}
	}
	var dc struct {
		DeviceCode      string  `json:"device_code"`
		UserCode        string  `json:"user_code"`
		VerificationURI string  `json:"verification_uri"`
		Interval        float64 `json:"interval"`
		ExpiresIn       float64 `json:"expires_in"`
	}
	ua := map[string]string{"User-Agent": CopilotHeaders["User-Agent"]}
	form := url.Values{"client_id": {copilotClientID}, "scope": {"read:user"}}
	if err := postForm(ctx, o, "https://"+domain+"/login/device/code", form, ua, &dc); err != nil {
		return nil, fmt.Errorf("asking GitHub for a device code: %w", err)
	}
	if dc.DeviceCode == "" || dc.UserCode == "" {
		return nil, errors.New("GitHub's device-code answer has no device_code or user_code")
	}
	page := dc.VerificationURI
	if page == "" {
		page = "https://" + domain + "/login/device"
	}
	ui.show(fmt.Sprintf("Open %s and enter the code %s", page, dc.UserCode))
	ui.open(page)
	interval := time.Duration(dc.Interval * float64(time.Second))
	if interval <= 0 {
		interval = 5 * time.Second
	}
	expires := dc.ExpiresIn
	if expires <= 0 {
		expires = 900
	}
	deadline := o.now().Add(time.Duration(expires * float64(time.Second)))
	var ghToken string
	for ghToken == "" {
		if err := o.sleep(ctx, interval); err != nil {
			return nil, err
		}
		if o.now().After(deadline) {
			return nil, errors.New("the device code expired before the login was confirmed")
		}
		var res struct {
			AccessToken string  `json:"access_token"`
			Error       string  `json:"error"`
			Description string  `json:"error_description"`
			Interval    float64 `json:"interval"`
		}
		poll := url.Values{"client_id": {copilotClientID}, "device_code": {dc.DeviceCode}, "grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}}
		err := postForm(ctx, o, "https://"+domain+"/login/oauth/access_token", poll, ua, &res)
		var he *httpError
		if errors.As(err, &he) {
			res.Error = he.oauthErrorCode()
			if res.Error == "" {
				return nil, fmt.Errorf("waiting for the device login: %w", err)
			}
		} else if err != nil {
			return nil, fmt.Errorf("waiting for the device login: %w", err)
		}
		switch res.Error {
		case "":
			if res.AccessToken == "" {
				return nil, errors.New("GitHub's answer has neither an access_token nor an error")
			}
			ghToken = res.AccessToken
		case "authorization_pending":
		case "slow_down":
			if res.Interval > 0 {
				interval = time.Duration(res.Interval * float64(time.Second))
			} else {
				interval += 5 * time.Second
			}
		default:
			return nil, fmt.Errorf("GitHub refused the login: %s %s", res.Error, res.Description)
		}
	}
	c := &Credential{Type: TypeOAuth, Refresh: ghToken}
	if domain != "github.com" {
		c.EnterpriseURL = domain
	}
	out, err := p.Refresh(ctx, o, c)
	if err != nil {
		return nil, err
	}
	enableModels(ctx, o, out)
	return out, nil
}

func (copilotProvider) Refresh(ctx context.Context, o *Options, c *Credential) (*Credential, error) {
	domain := "github.com"
	if c.EnterpriseURL != "" {
		d, err := normalizeDomain(c.EnterpriseURL)
		if err != nil {
			return nil, err
		}
		domain = d
	}
	req, err := http.NewRequest(http.MethodGet, o.url("https://api."+domain+"/copilot_internal/v2/token"), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Refresh)
	for k, v := range CopilotHeaders {
		req.Header.Set(k, v)
	}
	var tok struct {
		Token     string  `json:"token"`
		ExpiresAt float64 `json:"expires_at"`
	}
	if err := do(ctx, o, req, &tok); err != nil {
		return nil, fmt.Errorf("Copilot token exchange: %w", err)
	}
	if tok.Token == "" || tok.ExpiresAt <= 0 {
		return nil, errors.New("the Copilot token answer has no token or expires_at")
	}
	out := &Credential{
		Type:          TypeOAuth,
		Refresh:       c.Refresh,
		Access:        tok.Token,
		Expires:       int64(tok.ExpiresAt*1000) - copilotMargin.Milliseconds(),
		EnterpriseURL: c.EnterpriseURL,
	}
	list, err := copilotModels(ctx, o, CopilotBaseURL(tok.Token, c.EnterpriseURL), tok.Token)
	if err != nil {
		return nil, err
	}
	out.AvailableModelIDs = make([]string, 0, len(list))
	for _, m := range list {
		out.AvailableModelIDs = append(out.AvailableModelIDs, m.ID)
	}
	return out, nil
}

// enableModels turns on, after a login, the catalogue's models whose
// policy the account has not configured yet (as pi does), so that they
// can be used. Failures are left for the first request to report.
func enableModels(ctx context.Context, o *Options, c *Credential) {
	if o == nil || len(o.CopilotCatalogue) == 0 {
		return
	}
	known := map[string]bool{}
	for _, id := range o.CopilotCatalogue {
		known[id] = true
	}
	base := CopilotBaseURL(c.Access, c.EnterpriseURL)
	list, err := copilotModels(ctx, o, base, c.Access)
	if err != nil {
		return
	}
	for _, m := range list {
		if m.Policy.State != "unconfigured" || !known[m.ID] {
			continue
		}
		headers := map[string]string{"Authorization": "Bearer " + c.Access, "openai-intent": "chat-policy", "x-interaction-type": "chat-policy"}
		for k, v := range CopilotHeaders {
			headers[k] = v
		}
		_ = postJSON(ctx, o, base+"/models/"+url.PathEscape(m.ID)+"/policy", map[string]string{"state": "enabled"}, headers, nil)
	}
}

// copilotModel is one model of Copilot's list.
type copilotModel struct {
	ID     string `json:"id"`
	Policy struct {
		State string `json:"state"`
	} `json:"policy"`
}

// copilotModels lists the models the account may use.
func copilotModels(ctx context.Context, o *Options, base, token string) ([]copilotModel, error) {
	req, err := http.NewRequest(http.MethodGet, o.url(base+"/models"), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range CopilotHeaders {
		req.Header.Set(k, v)
	}
	req.Header.Set("X-GitHub-Api-Version", CopilotAPIVersion)
	var list struct {
		Data []copilotModel `json:"data"`
	}
	if err := do(ctx, o, req, &list); err != nil {
		return nil, fmt.Errorf("listing Copilot models: %w", err)
	}
	out := list.Data[:0]
	for _, m := range list.Data {
		if m.ID != "" {
			out = append(out, m)
		}
	}
	return out, nil
}

// CopilotBaseURL is the API host a Copilot token names in its
// "proxy-ep=proxy.X" field (as https://api.X), else the enterprise's
// copilot-api host, else the individual one.
func CopilotBaseURL(token, enterprise string) string {
	for _, part := range strings.Split(token, ";") {
		if ep, ok := strings.CutPrefix(part, "proxy-ep="); ok && ep != "" {
			host := ep
			if rest, ok := strings.CutPrefix(ep, "proxy."); ok {
				host = "api." + rest
			}
			return "https://" + host
		}
	}
	if enterprise != "" {
		if d, err := normalizeDomain(enterprise); err == nil {
			return "https://copilot-api." + d
		}
	}
	return "https://api.individual.githubcopilot.com"
}
