package models

import (
	"context"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/auth"
)

// Auth returns the auth.json store (nil when the registry was built
// without an agent dir).
func (r *Registry) Auth() *auth.Store {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.auth
}

// Close waits for OAuth refreshes already sent to be written to auth.json
// (a rotated refresh token must not be lost); call it before exiting.
func (r *Registry) Close() {
	if s := r.Auth(); s != nil {
		s.Close()
	}
}

// override returns the --api-key override of a provider ("" when none).
func (r *Registry) override(provider string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if o := r.overrides[provider]; o != "" {
		return o
	}
	return r.overrides["*"]
}

// HasAPIKeyOverride reports whether --api-key applies to provider.
func (r *Registry) HasAPIKeyOverride(provider string) bool { return r.override(provider) != "" }

// KeyVariables are the environment variables a provider's key is read
// from, in order.
func (r *Registry) KeyVariables(provider string) []string {
	if p, ok := r.Provider(provider); ok {
		return append([]string(nil), p.Env...)
	}
	return nil
}

// ResolveKey returns the key a request to provider uses now: like Key,
// but a stored OAuth login is refreshed first when less than
// max(auth.RefreshMargin, minValid) of its token is left. The error says
// what is missing, or why the refresh failed (the login stays stored).
func (r *Registry) ResolveKey(ctx context.Context, provider string, minValid time.Duration) (string, error) {
	if o := r.override(provider); o != "" {
		return o, nil
	}
	if s := r.Auth(); s != nil {
		if c, err := s.Get(ctx, provider); err == nil && c.IsOAuth() {
			c, err := s.Token(ctx, provider, minValid)
			if err != nil {
				return "", err
			}
			if c != nil && c.IsOAuth() {
				return c.Access, nil
			}
		}
	}
	if k, ok := r.Key(provider); ok {
		return k, nil
	}
	return "", r.MissingKeyError(provider)
}

// loginProvider wraps the adapter of a provider that has subscription
// logins: when the provider's key is a stored OAuth login (no --api-key),
// each request gets the current access token, refreshed first when it is
// about to expire; a refresh that fails is the request's error.
type loginProvider struct {
	ai.Provider
	reg  *Registry
	name string
	env  func(string) string
}

// anthropicAuthToken is the variable whose value Anthropic takes as a
// bearer token without the subscription mode (a gateway's token).
const anthropicAuthToken = "ANTHROPIC_AUTH_TOKEN"

func (p *loginProvider) Stream(ctx context.Context, req *ai.Request, emit func(ai.AssistantEvent)) *ai.AssistantMessage {
	var login *auth.Credential
	var stored bool
	if s := p.reg.Auth(); s != nil && p.reg.override(p.name) == "" {
		c, err := s.Get(ctx, p.name)
		stored = c != nil || err != nil
		if err == nil && c.IsOAuth() {
			c, err := s.Token(ctx, p.name, 0)
			if err != nil {
				b := ai.NewBuilder(req.Model, req.ThinkingLevel, emit)
				b.Start()
				return b.Fail(ctx, err)
			}
			if c.IsOAuth() { // else logged out meanwhile: the key as resolved
				r := *req
				r.APIKey = c.Access
				req = &r
				login = c
			}
		}
	}
	if p.name == "anthropic" && !stored && p.reg.override(p.name) == "" && req.APIKey != "" && req.APIKey == p.env(anthropicAuthToken) {
		// The key came from ANTHROPIC_AUTH_TOKEN (nothing stored): sent
		// as "Authorization: Bearer", not as x-api-key.
		r := *req
		m := *req.Model
		m.Headers = mergeHeaders(m.Headers, map[string]string{"Authorization": "Bearer " + req.APIKey})
		r.Model, r.APIKey = &m, ""
		req = &r
	}
	if p.name == copilotProvider {
		req = copilotRequest(req, login)
	}
	return p.Provider.Stream(ctx, req, emit)
}

const (
	copilotProvider = "github-copilot"
	// copilotDefaultBase is the catalogue's base URL of GitHub Copilot;
	// with a login the token names the real one.
	copilotDefaultBase = "https://api.individual.githubcopilot.com"
)

// copilotRequest adds what every GitHub Copilot request carries: the API
// host the Copilot token names (unless models.json set a base URL), the
// editor headers, X-Initiator (agent when the last message is not the
// user's), Openai-Intent, Copilot-Vision-Request when images are sent,
// and the token as a bearer on every wire API (Anthropic's included).
func copilotRequest(req *ai.Request, login *auth.Credential) *ai.Request {
	r := *req
	m := *req.Model
	if login != nil && (m.BaseURL == "" || m.BaseURL == copilotDefaultBase) {
		m.BaseURL = auth.CopilotBaseURL(login.Access, login.EnterpriseURL)
	}
	h := map[string]string{"Openai-Intent": "conversation-edits", "X-Initiator": "user"}
	for k, v := range auth.CopilotHeaders {
		h[k] = v
	}
	if n := len(req.Messages); n > 0 && req.Messages[n-1].MessageRole() != ai.RoleUser {
		h["X-Initiator"] = "agent"
	}
	if hasImages(req.Messages) {
		h["Copilot-Vision-Request"] = "true"
	}
	if m.API == APIAnthropicMessages && r.APIKey != "" {
		h["Authorization"] = "Bearer " + r.APIKey
		r.APIKey = ""
	}
	m.Headers = mergeHeaders(h, m.Headers)
	r.Model = &m
	return &r
}

func hasImages(msgs []ai.Message) bool {
	for _, msg := range msgs {
		var blocks []ai.Content
		switch x := msg.(type) {
		case *ai.UserMessage:
			blocks = x.Content.AsBlocks()
		case *ai.ToolResultMessage:
			blocks = x.Content
		}
		for _, c := range blocks {
			if c.Type == ai.ContentImage {
				return true
			}
		}
	}
	return false
}
