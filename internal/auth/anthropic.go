package auth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Anthropic (Claude Pro/Max): PKCE authorization code, through a loopback
// callback or a code the user copies from Anthropic's page; refresh tokens
// rotate. The client id is Claude Code's public one, as pi uses it.
const (
	anthropicClientID     = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
	anthropicAuthorizeURL = "https://claude.ai/oauth/authorize"
	anthropicTokenURL     = "https://platform.claude.com/v1/oauth/token"
	anthropicCopyRedirect = "https://platform.claude.com/oauth/code/callback"
	anthropicScopes       = "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload"
	anthropicPort         = 53692
	anthropicMargin       = 5 * time.Minute
)

type anthropicProvider struct{}

func (anthropicProvider) ID() string   { return "anthropic" }
func (anthropicProvider) Name() string { return "Anthropic (Claude Pro/Max)" }

func (anthropicProvider) Login(ctx context.Context, o *Options, ui *LoginUI) (*Credential, error) {
	verifier, challenge := pkce()
	var cs *callbackServer
	redirect := anthropicCopyRedirect
	if ui == nil || !ui.NoBrowser {
		port := anthropicPort
		if o != nil && o.AnyCallbackPort {
			port = 0
		}
		var err error
		cs, err = startCallback(o.callbackHost(), port, "/callback", true, func(state string) bool { return state == verifier })
		if err != nil {
			return nil, fmt.Errorf("cannot listen for the login callback: %v (use --no-browser to paste the code instead)", err)
		}
		defer cs.close()
		redirect = fmt.Sprintf("http://localhost:%d/callback", cs.port)
	}
	q := url.Values{}
	q.Set("code", "true")
	q.Set("client_id", anthropicClientID)
	q.Set("response_type", "code")
	q.Set("redirect_uri", redirect)
	q.Set("scope", anthropicScopes)
	q.Set("code_challenge", challenge)
	q.Set("code_challenge_method", "S256")
	q.Set("state", verifier)
	authURL := o.url(anthropicAuthorizeURL) + "?" + q.Encode()
	ui.open(authURL)
	question := "Paste the authorization code (code#state) shown after you log in:"
	if cs != nil {
		question = "Waiting for the browser; or paste the redirect URL or code here:"
	}
	res, err := waitCode(ctx, cs, ui, question, func(state string) error {
		if state != "" && state != verifier {
			return errors.New("that code belongs to another login attempt (its state does not match); paste the code of this one")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var tok tokenResponse
	body := map[string]string{
		"grant_type":    "authorization_code",
		"client_id":     anthropicClientID,
		"code":          res.code,
		"state":         verifier,
		"redirect_uri":  redirect,
		"code_verifier": verifier,
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := postJSON(ctx, o, anthropicTokenURL, body, nil, &tok); err != nil {
		return nil, fmt.Errorf("exchanging the authorization code: %w", err)
	}
	if err := tok.check(true); err != nil {
		return nil, err
	}
	return &Credential{Type: TypeOAuth, Refresh: tok.RefreshToken, Access: tok.AccessToken, Expires: tok.expiresAt(o, anthropicMargin)}, nil
}

func (anthropicProvider) Refresh(ctx context.Context, o *Options, c *Credential) (*Credential, error) {
	var tok tokenResponse
	body := map[string]string{"grant_type": "refresh_token", "client_id": anthropicClientID, "refresh_token": c.Refresh}
	if err := postJSON(ctx, o, anthropicTokenURL, body, nil, &tok); err != nil {
		return nil, err
	}
	if err := tok.check(true); err != nil {
		return nil, err
	}
	return &Credential{Type: TypeOAuth, Refresh: tok.RefreshToken, Access: tok.AccessToken, Expires: tok.expiresAt(o, anthropicMargin)}, nil
}
