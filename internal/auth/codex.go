package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// OpenAI Codex (ChatGPT Plus/Pro through the Codex backend): PKCE on the
// loopback port the Codex CLI uses, or OpenAI's device code; the account id
// comes from the access token.
const (
	codexClientID       = "app_EMoamEEZ73f0CkXaXp7hrann"
	codexAuthorizeURL   = "https://auth.openai.com/oauth/authorize"
	codexTokenURL       = "https://auth.openai.com/oauth/token"
	codexUserCodeURL    = "https://auth.openai.com/api/accounts/deviceauth/usercode"
	codexDeviceTokenURL = "https://auth.openai.com/api/accounts/deviceauth/token"
	codexDevicePage     = "https://auth.openai.com/codex/device"
	codexDeviceRedirect = "https://auth.openai.com/deviceauth/callback"
	codexPort           = 1455
	codexDeviceTimeout  = 15 * time.Minute
)

type codexProvider struct{}

func (codexProvider) ID() string   { return "openai-codex" }
func (codexProvider) Name() string { return "OpenAI Codex (ChatGPT Plus/Pro)" }

func (p codexProvider) Login(ctx context.Context, o *Options, ui *LoginUI) (*Credential, error) {
	if ui != nil && ui.NoBrowser {
		return p.deviceLogin(ctx, o, ui)
	}
	verifier, challenge := pkce()
	state := randomHex(16)
	port := codexPort
	if o != nil && o.AnyCallbackPort {
		port = 0
	}
	redirect := fmt.Sprintf("http://localhost:%d/auth/callback", codexPort)
	// The port is shared with the Codex CLI: when it is taken, the login
	// goes on with the pasted redirect URL only.
	cs, err := startCallback(o.callbackHost(), port, "/auth/callback", false, func(s string) bool { return s == state })
	if err == nil {
		defer cs.close()
		if port == 0 {
			redirect = fmt.Sprintf("http://localhost:%d/auth/callback", cs.port)
		}
	} else {
		ui.show(fmt.Sprintf("Port %d is busy (the Codex CLI?): paste the address the browser ends on.", codexPort))
	}
	originator := "pi"
	if o != nil && o.Originator != "" {
		originator = o.Originator
	}
	q := url.Values{}
	q.Set("response_type", "code")
	q.Set("client_id", codexClientID)
	q.Set("redirect_uri", redirect)
	q.Set("scope", "openid profile email offline_access")
	q.Set("code_challenge", challenge)
	q.Set("code_challenge_method", "S256")
	q.Set("state", state)
	q.Set("id_token_add_organizations", "true")
	q.Set("codex_cli_simplified_flow", "true")
	q.Set("originator", originator)
	ui.open(o.url(codexAuthorizeURL) + "?" + q.Encode())
	res, err := waitCode(ctx, cs, ui, "Waiting for the browser; or paste the redirect URL here:", func(s string) error {
		if s != state {
			return errors.New("paste the whole address the browser ends on (its state must match this login)")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return codexExchange(ctx, o, res.code, verifier, redirect)
}

// deviceLogin is OpenAI's device-code flow: the user enters a code on
// OpenAI's page; polling returns an authorization code and its verifier.
func (codexProvider) deviceLogin(ctx context.Context, o *Options, ui *LoginUI) (*Credential, error) {
	var uc struct {
		DeviceAuthID string          `json:"device_auth_id"`
		UserCode     string          `json:"user_code"`
		Interval     json.RawMessage `json:"interval"`
	}
	if err := postJSON(ctx, o, codexUserCodeURL, map[string]string{"client_id": codexClientID}, nil, &uc); err != nil {
		return nil, fmt.Errorf("asking for a device code: %w", err)
	}
	if uc.DeviceAuthID == "" || uc.UserCode == "" {
		return nil, errors.New("the device-code answer has no device_auth_id or user_code")
	}
	interval := 5 * time.Second
	var secs float64
	if err := json.Unmarshal(uc.Interval, &secs); err == nil && secs > 0 {
		interval = time.Duration(secs * float64(time.Second))
	} else if s := strings.Trim(string(uc.Interval), `"`); s != "" {
		var f float64
		if _, err := fmt.Sscan(s, &f); err == nil && f > 0 {
			interval = time.Duration(f * float64(time.Second))
		}
	}
	interval = max(interval, time.Second)
	ui.show(fmt.Sprintf("Open %s and enter the code %s", codexDevicePage, uc.UserCode))
	ui.open(codexDevicePage)
	deadline := o.now().Add(codexDeviceTimeout)
	for {
		if err := o.sleep(ctx, interval); err != nil {
			return nil, err
		}
		if o.now().After(deadline) {
			return nil, errors.New("the device code expired before the login was confirmed")
		}
		var got struct {
			AuthorizationCode string `json:"authorization_code"`
			CodeVerifier      string `json:"code_verifier"`
		}
		err := postJSON(ctx, o, codexDeviceTokenURL, map[string]string{"device_auth_id": uc.DeviceAuthID, "user_code": uc.UserCode}, nil, &got)
		var he *httpError
		if errors.As(err, &he) {
			switch code := he.oauthErrorCode(); {
			case he.Status == http.StatusForbidden || he.Status == http.StatusNotFound,
				code == "deviceauth_authorization_pending", code == "authorization_pending":
				continue
			case code == "slow_down":
				interval += 5 * time.Second
				continue
			}
		}
		if err != nil {
			return nil, fmt.Errorf("waiting for the device login: %w", err)
		}
		if got.AuthorizationCode == "" || got.CodeVerifier == "" {
			return nil, errors.New("the device login answer has no authorization_code or code_verifier")
		}
		return codexExchange(ctx, o, got.AuthorizationCode, got.CodeVerifier, codexDeviceRedirect)
	}
}

func codexExchange(ctx context.Context, o *Options, code, verifier, redirect string) (*Credential, error) {
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"client_id":     {codexClientID},
		"code":          {code},
		"code_verifier": {verifier},
		"redirect_uri":  {redirect},
	}
	var tok tokenResponse
	if err := postForm(ctx, o, codexTokenURL, form, nil, &tok); err != nil {
		return nil, fmt.Errorf("exchanging the authorization code: %w", err)
	}
	return codexCredential(o, &tok)
}

func codexCredential(o *Options, tok *tokenResponse) (*Credential, error) {
	if err := tok.check(true); err != nil {
		return nil, err
	}
	acct, err := CodexAccountID(tok.AccessToken)
	if err != nil {
		return nil, err
	}
	return &Credential{Type: TypeOAuth, Access: tok.AccessToken, Refresh: tok.RefreshToken, Expires: tok.expiresAt(o, 0), AccountID: acct}, nil
}

func (codexProvider) Refresh(ctx context.Context, o *Options, c *Credential) (*Credential, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {c.Refresh}, "client_id": {codexClientID}}
	var tok tokenResponse
	if err := postForm(ctx, o, codexTokenURL, form, nil, &tok); err != nil {
		return nil, err
	}
	return codexCredential(o, &tok)
}

// CodexAccountID reads the ChatGPT account id from an access token (a JWT
// whose claim "https://api.openai.com/auth" holds chatgpt_account_id).
func CodexAccountID(token string) (string, error) {
	claims, err := jwtClaims(token)
	if err != nil {
		return "", err
	}
	var c struct {
		Auth struct {
			AccountID string `json:"chatgpt_account_id"`
		} `json:"https://api.openai.com/auth"`
	}
	if err := json.Unmarshal(claims, &c); err != nil || c.Auth.AccountID == "" {
		return "", errors.New("the access token names no ChatGPT account (chatgpt_account_id)")
	}
	return c.Auth.AccountID, nil
}

// jwtClaims decodes (without verifying) a JWT's payload.
func jwtClaims(token string) ([]byte, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("the access token is not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil, errors.New("the access token's payload is not base64url")
	}
	return b, nil
}
