package auth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// "Sign in with ChatGPT" for the openai provider (api.openai.com): PKCE
// with a client the authorization server registers for each login (the
// callback names it), tokens for the API resource, rotating refresh
// tokens. The login names this installation by the deviceId of the
// global settings.
const (
	chatgptAuthorizeURL = "https://auth.openai.com/api/accounts/authorize"
	chatgptTokenURL     = "https://auth.openai.com/api/accounts/oauth/token"
	chatgptClient       = "dynamic_agent_client"
	chatgptResource     = "https://api.openai.com/v1"
	chatgptScope        = "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct"
	chatgptNeededScope  = "chatgpt.tokens.use.direct"
	chatgptMargin       = 3 * time.Minute
)

type chatgptProvider struct{}

func (chatgptProvider) ID() string   { return "openai" }
func (chatgptProvider) Name() string { return "OpenAI (Sign in with ChatGPT)" }

func (chatgptProvider) Login(ctx context.Context, o *Options, ui *LoginUI) (*Credential, error) {
	if o == nil || o.DeviceID == nil {
		return nil, errors.New("Sign in with ChatGPT needs this installation's deviceId (settings), which is not available here")
	}
	device, err := o.DeviceID()
	if err != nil {
		return nil, fmt.Errorf("reading or creating deviceId in the settings: %w", err)
	}
	verifier, challenge := pkce()
	state, nonce := randomB64(32), randomB64(32)
	port := codexPort
	if o.AnyCallbackPort {
		port = 0
	}
	// No fallback port: the redirect address is registered as it is.
	cs, err := startCallback(o.callbackHost(), port, "/auth/callback", false, func(s string) bool { return s == state })
	if err != nil {
		return nil, fmt.Errorf("cannot listen on port %d for the login callback (is the Codex CLI or another login running?): %v", codexPort, err)
	}
	defer cs.close()
	redirect := fmt.Sprintf("http://127.0.0.1:%d/auth/callback", cs.port)
	q := url.Values{}
	q.Set("client_id", chatgptClient)
	q.Set("agent_name_hint", "Pi")
	q.Set("ext_agent_host_id", "urn:uuid:"+device)
	q.Set("response_type", "code")
	q.Set("redirect_uri", redirect)
	q.Set("resource", chatgptResource)
	q.Set("scope", chatgptScope)
	q.Set("state", state)
	q.Set("nonce", nonce)
	q.Set("code_challenge", challenge)
	q.Set("code_challenge_method", "S256")
	ui.open(o.url(chatgptAuthorizeURL) + "?" + q.Encode())
	res, err := waitCode(ctx, cs, ui, "Waiting for the browser; or paste the address it ends on here:", func(s string) error {
		if s != state {
			return errors.New("paste the whole address the browser ends on (its state must match this login)")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	client := res.query["client_id"]
	if client == "" {
		return nil, errors.New("the login answer names no client_id")
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"client_id":     {client},
		"code":          {res.code},
		"code_verifier": {verifier},
		"redirect_uri":  {redirect},
		"resource":      {chatgptResource},
	}
	var tok tokenResponse
	if err := postForm(ctx, o, chatgptTokenURL, form, nil, &tok); err != nil {
		return nil, fmt.Errorf("exchanging the authorization code: %w", err)
	}
	if tok.IDToken == "" {
		return nil, errors.New("the token answer has no id_token")
	}
	return chatgptCredential(o, &tok, client, nil)
}

func chatgptCredential(o *Options, tok *tokenResponse, client string, oldScopes []string) (*Credential, error) {
	if err := tok.check(true); err != nil {
		return nil, err
	}
	scopes := strings.Fields(tok.Scope)
	if len(scopes) == 0 {
		scopes = oldScopes
	}
	if !slices.Contains(scopes, chatgptNeededScope) {
		return nil, fmt.Errorf("the login was not granted %s (granted: %s)", chatgptNeededScope, strings.Join(scopes, " "))
	}
	return &Credential{Type: TypeOAuth, Access: tok.AccessToken, Refresh: tok.RefreshToken,
		Expires: tok.expiresAt(o, chatgptMargin), ClientID: client, Scopes: scopes}, nil
}

func (chatgptProvider) Refresh(ctx context.Context, o *Options, c *Credential) (*Credential, error) {
	if c.ClientID == "" {
		return nil, errors.New("the stored login has no clientId")
	}
	form := url.Values{"grant_type": {"refresh_token"}, "client_id": {c.ClientID}, "refresh_token": {c.Refresh}, "resource": {chatgptResource}}
	var tok tokenResponse
	if err := postForm(ctx, o, chatgptTokenURL, form, nil, &tok); err != nil {
		return nil, err
	}
	return chatgptCredential(o, &tok, c.ClientID, c.Scopes)
}
