// Package authtest is a local HTTP server that speaks the OAuth wire of
// the vendors Pisces logs in to (Anthropic, OpenAI's auth server, GitHub
// and the Copilot API), for tests: authorize redirects, token endpoints
// with JSON or form bodies as each vendor takes them, device-code polling
// with authorization_pending and slow_down, the Copilot token exchange and
// model list. Refresh tokens rotate: a used one is refused with
// invalid_grant, as the vendors do.
package authtest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Client ids the server expects (the vendors' public ones).
const (
	AnthropicClientID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
	CodexClientID     = "app_EMoamEEZ73f0CkXaXp7hrann"
	CopilotClientID   = "Iv1.b507a08c87ecfe98"
)

// Server is the fake vendor.
type Server struct {
	*httptest.Server
	t testing.TB

	mu sync.Mutex
	// ExpiresIn is the lifetime given to access tokens (seconds).
	ExpiresIn int
	// Pending is how many device polls answer authorization_pending
	// before the login is confirmed; SlowDown how many of those say
	// slow_down instead.
	Pending, SlowDown int
	// Interval is the device-code polling interval announced (seconds).
	Interval int
	// FailRefresh makes every refresh answer 500.
	FailRefresh bool
	// AccountID is the chatgpt_account_id put into Codex tokens.
	AccountID string
	// Models are the ids Copilot's model list returns.
	Models []string
	// FailModels makes Copilot's model list answer 500.
	FailModels bool
	// Unconfigured are the Copilot models whose policy is not set yet;
	// Enabled records the ones turned on (POST /models/ID/policy).
	Unconfigured, Enabled []string
	// BeforeRefresh, when set, runs inside each refresh request before
	// the answer (a test may hold the answer there).
	BeforeRefresh func(provider string)

	refreshes map[string]int       // provider -> refresh calls answered with a token
	live      map[string]string    // refresh token -> provider (unused tokens)
	codes     map[string]codeGrant // authorization code -> grant
	// chatgptClients is the client issued for a ChatGPT login, by its
	// authorization code and then by each refresh token.
	chatgptClients map[string]string
	devices        map[string]*devicePol // device code -> polls
	seq            int
	// Requests records every request: method, path and body.
	requests []Request
}

// Request is a request the server received.
type Request struct {
	Method, Path, ContentType string
	Query                     url.Values
	Header                    http.Header
	Body                      map[string]string
}

type codeGrant struct {
	provider, redirect, challenge, verifier string
}

type devicePol struct {
	polls int
	code  string
}

// New starts the server; it stops when the test ends.
func New(t testing.TB) *Server {
	s := &Server{t: t, ExpiresIn: 3600, Interval: 5, AccountID: "acct-123", Models: []string{"gpt-4.1", "claude-sonnet-4"},
		refreshes: map[string]int{}, live: map[string]string{}, codes: map[string]codeGrant{}, devices: map[string]*devicePol{}, chatgptClients: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Set changes the server's settings (the exported fields) while it may
// be serving.
func (s *Server) Set(f func(s *Server)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// Refreshes is how many refreshes of provider were answered with tokens.
func (s *Server) Refreshes(provider string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshes[provider]
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// IssueRefresh registers a refresh token for provider (as if a login had
// returned it) and returns it.
func (s *Server) IssueRefresh(provider string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newRefresh(provider)
}

// Live reports whether a refresh token may still be used.
func (s *Server) Live(refresh string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.live[refresh]
	return ok
}

func (s *Server) newRefresh(provider string) string {
	s.seq++
	r := fmt.Sprintf("%s-refresh-%d", provider, s.seq)
	s.live[r] = provider
	return r
}

// CodexToken makes a JWT-shaped access token naming account.
func CodexToken(account string, n int) string {
	claims, _ := json.Marshal(map[string]any{"https://api.openai.com/auth": map[string]string{"chatgpt_account_id": account}, "n": n})
	return "eyJhbGciOiJub25lIn0." + base64.RawURLEncoding.EncodeToString(claims) + ".sig"
}

func (s *Server) accessFor(provider string) string {
	s.seq++
	switch provider {
	case "anthropic":
		return fmt.Sprintf("sk-ant-oat01-access-%d", s.seq)
	case "openai-codex":
		return CodexToken(s.AccountID, s.seq)
	}
	return fmt.Sprintf("access-%d", s.seq)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body := map[string]string{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	data, _ := io.ReadAll(r.Body)
	switch ct {
	case "application/json":
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			http.Error(w, `{"error":"invalid_request","error_description":"body is not JSON"}`, 400)
			return
		}
		for k, v := range m {
			body[k] = fmt.Sprint(v)
		}
	case "application/x-www-form-urlencoded":
		q, err := url.ParseQuery(string(data))
		if err != nil {
			http.Error(w, `{"error":"invalid_request"}`, 400)
			return
		}
		for k := range q {
			body[k] = q.Get(k)
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, ContentType: ct, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
	s.mu.Unlock()

	switch r.URL.Path {
	case "/oauth/authorize":
		s.authorize(w, r)
	case "/api/accounts/authorize":
		s.chatgptAuthorize(w, r)
	case "/api/accounts/oauth/token":
		if ct != "application/x-www-form-urlencoded" || body["resource"] != "https://api.openai.com/v1" {
			oauthError(w, 400, "invalid_request", "a form with the API resource")
			return
		}
		s.mu.Lock()
		client := s.chatgptClients[body["code"]+body["refresh_token"]]
		s.mu.Unlock()
		if client == "" {
			client = "no-client"
		}
		s.token(w, "openai", client, body)
	case "/v1/oauth/token":
		if ct != "application/json" {
			oauthError(w, 400, "invalid_request", "Anthropic's token endpoint takes JSON")
			return
		}
		s.token(w, "anthropic", AnthropicClientID, body)
	case "/oauth/token":
		if ct != "application/x-www-form-urlencoded" {
			oauthError(w, 400, "invalid_request", "OpenAI's token endpoint takes a form")
			return
		}
		s.token(w, "openai-codex", CodexClientID, body)
	case "/api/accounts/deviceauth/usercode":
		if body["client_id"] != CodexClientID {
			oauthError(w, 400, "invalid_client", "unknown client")
			return
		}
		s.mu.Lock()
		s.seq++
		id := fmt.Sprintf("devauth-%d", s.seq)
		s.devices[id] = &devicePol{}
		interval := s.Interval
		s.mu.Unlock()
		writeJSON(w, 200, map[string]any{"device_auth_id": id, "user_code": "ABCD-1234", "interval": fmt.Sprint(interval)})
	case "/api/accounts/deviceauth/token":
		s.codexDevicePoll(w, body)
	case "/login/device/code":
		if body["client_id"] != CopilotClientID || body["scope"] != "read:user" {
			oauthError(w, 400, "invalid_request", "client_id or scope")
			return
		}
		s.mu.Lock()
		s.seq++
		dc := fmt.Sprintf("ghdevice-%d", s.seq)
		s.devices[dc] = &devicePol{}
		interval := s.Interval
		s.mu.Unlock()
		writeJSON(w, 200, map[string]any{"device_code": dc, "user_code": "WXYZ-9876", "verification_uri": "https://github.com/login/device", "interval": interval, "expires_in": 900})
	case "/login/oauth/access_token":
		s.githubPoll(w, body)
	case "/copilot_internal/v2/token":
		s.copilotToken(w, r)
	case "/models":
		s.copilotModels(w, r)
	default:
		if id, ok := strings.CutPrefix(r.URL.Path, "/models/"); ok && strings.HasSuffix(id, "/policy") && r.Method == http.MethodPost {
			if body["state"] != "enabled" || r.Header.Get("openai-intent") != "chat-policy" || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer tid=") {
				writeJSON(w, 400, map[string]string{"message": "bad policy request"})
				return
			}
			s.mu.Lock()
			s.Enabled = append(s.Enabled, strings.TrimSuffix(id, "/policy"))
			s.mu.Unlock()
			writeJSON(w, 200, map[string]string{"state": "enabled"})
			return
		}
		http.NotFound(w, r)
	}
}

// authorize plays the user who approves: it redirects to redirect_uri with
// a code and the state.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	provider := map[string]string{AnthropicClientID: "anthropic", CodexClientID: "openai-codex"}[q.Get("client_id")]
	if provider == "" || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorize request", 400)
		return
	}
	s.mu.Lock()
	s.seq++
	code := fmt.Sprintf("code-%d", s.seq)
	s.codes[code] = codeGrant{provider: provider, redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge")}
	s.mu.Unlock()
	u, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", 400)
		return
	}
	v := url.Values{"code": {code}, "state": {q.Get("state")}}
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// IssueChatGPTRefresh registers a refresh token of a ChatGPT login of
// client (as if a login had returned it) and returns it.
func (s *Server) IssueChatGPTRefresh(client string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.newRefresh("openai")
	s.chatgptClients[r] = client
	return r
}

// chatgptAuthorize plays the user who approves a Sign in with ChatGPT
// login: a client is registered for it and named in the redirect.
func (s *Server) chatgptAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != "dynamic_agent_client" || !strings.HasPrefix(q.Get("ext_agent_host_id"), "urn:uuid:") ||
		q.Get("resource") != "https://api.openai.com/v1" || !strings.Contains(q.Get("scope"), "chatgpt.tokens.use.direct") ||
		q.Get("nonce") == "" || q.Get("code_challenge_method") != "S256" {
		http.Error(w, "bad authorize request", 400)
		return
	}
	s.mu.Lock()
	s.seq++
	code := fmt.Sprintf("chatgpt-code-%d", s.seq)
	client := fmt.Sprintf("client-issued-%d", s.seq)
	s.codes[code] = codeGrant{provider: "openai", redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge")}
	s.chatgptClients[code] = client
	s.mu.Unlock()
	u, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", 400)
		return
	}
	u.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}, "client_id": {client}}.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// codexDevicePoll answers a Codex device poll: slow_down, then pending,
// then an authorization code with its verifier.
func (s *Server) codexDevicePoll(w http.ResponseWriter, body map[string]string) {
	s.mu.Lock()
	d := s.devices[body["device_auth_id"]]
	if d == nil || body["user_code"] != "ABCD-1234" {
		s.mu.Unlock()
		oauthError(w, 400, "invalid_request", "unknown device_auth_id")
		return
	}
	d.polls++
	switch {
	case d.polls <= s.SlowDown:
		s.mu.Unlock()
		oauthError(w, 400, "slow_down", "")
		return
	case d.polls <= s.SlowDown+s.Pending:
		s.mu.Unlock()
		oauthError(w, 403, "deviceauth_authorization_pending", "")
		return
	}
	s.seq++
	code := fmt.Sprintf("devcode-%d", s.seq)
	verifier := fmt.Sprintf("verifier-%d", s.seq)
	s.codes[code] = codeGrant{provider: "openai-codex", redirect: "https://auth.openai.com/deviceauth/callback", verifier: verifier}
	s.mu.Unlock()
	writeJSON(w, 200, map[string]string{"authorization_code": code, "code_verifier": verifier})
}

func (s *Server) githubPoll(w http.ResponseWriter, body map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.devices[body["device_code"]]
	if d == nil || body["client_id"] != CopilotClientID || body["grant_type"] != "urn:ietf:params:oauth:grant-type:device_code" {
		writeJSON(w, 200, map[string]string{"error": "incorrect_device_code"})
		return
	}
	d.polls++
	switch {
	case d.polls <= s.SlowDown:
		writeJSON(w, 200, map[string]any{"error": "slow_down", "interval": 10})
		return
	case d.polls <= s.SlowDown+s.Pending:
		writeJSON(w, 200, map[string]string{"error": "authorization_pending"})
		return
	}
	gh := s.newRefresh("github")
	writeJSON(w, 200, map[string]string{"access_token": gh, "token_type": "bearer", "scope": "read:user"})
}

func (s *Server) token(w http.ResponseWriter, provider, clientID string, body map[string]string) {
	if body["client_id"] != clientID {
		oauthError(w, 401, "invalid_client", "unknown client_id")
		return
	}
	switch body["grant_type"] {
	case "authorization_code":
		s.mu.Lock()
		g, ok := s.codes[body["code"]]
		delete(s.codes, body["code"])
		s.mu.Unlock()
		if !ok || g.provider != provider || g.redirect != body["redirect_uri"] {
			oauthError(w, 400, "invalid_grant", "unknown code or redirect_uri mismatch")
			return
		}
		if g.verifier != "" {
			if body["code_verifier"] != g.verifier {
				oauthError(w, 400, "invalid_grant", "code_verifier")
				return
			}
		} else if challenge(body["code_verifier"]) != g.challenge {
			oauthError(w, 400, "invalid_grant", "PKCE verification failed")
			return
		}
	case "refresh_token":
		s.mu.Lock()
		before := s.BeforeRefresh
		s.mu.Unlock()
		if before != nil {
			before(provider)
		}
		s.mu.Lock()
		fail := s.FailRefresh
		p, ok := s.live[body["refresh_token"]]
		delete(s.live, body["refresh_token"])
		s.mu.Unlock()
		if fail {
			oauthError(w, 500, "server_error", "try later")
			return
		}
		if !ok || p != provider {
			oauthError(w, 400, "invalid_grant", "refresh token already used or unknown")
			return
		}
		s.mu.Lock()
		s.refreshes[provider]++
		s.mu.Unlock()
	default:
		oauthError(w, 400, "unsupported_grant_type", body["grant_type"])
		return
	}
	s.mu.Lock()
	refresh := s.newRefresh(provider)
	access := s.accessFor(provider)
	exp := s.ExpiresIn
	answer := map[string]any{"access_token": access, "refresh_token": refresh, "expires_in": exp, "token_type": "Bearer"}
	if provider == "openai" {
		s.chatgptClients[refresh] = clientID
		answer["id_token"] = "eyJhbGciOiJub25lIn0.e30.sig"
		answer["scope"] = "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct"
	}
	s.mu.Unlock()
	writeJSON(w, 200, answer)
}

func (s *Server) copilotToken(w http.ResponseWriter, r *http.Request) {
	gh, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.live[gh]; !ok || p != "github" || r.Header.Get("Editor-Version") == "" {
		writeJSON(w, 401, map[string]string{"message": "Bad credentials"})
		return
	}
	if s.FailRefresh {
		writeJSON(w, 500, map[string]string{"message": "unavailable"})
		return
	}
	s.refreshes["github-copilot"]++
	s.seq++
	host := strings.TrimPrefix(s.URL, "http://")
	tok := fmt.Sprintf("tid=%d;exp=1;proxy-ep=proxy.%s;sku=x", s.seq, host)
	writeJSON(w, 200, map[string]any{"token": tok, "expires_at": 4102444800, "refresh_in": 1500})
}

func (s *Server) copilotModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.FailModels || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer tid=") || r.Header.Get("X-GitHub-Api-Version") == "" {
		writeJSON(w, 500, map[string]string{"message": "models unavailable"})
		return
	}
	var data []map[string]any
	for _, id := range s.Models {
		state := "enabled"
		for _, u := range s.Unconfigured {
			if u == id {
				state = "unconfigured"
			}
		}
		data = append(data, map[string]any{"id": id, "object": "model", "policy": map[string]string{"state": state}})
	}
	writeJSON(w, 200, map[string]any{"data": data, "object": "list"})
}

func challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
