package models

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/auth/authtest"
)

// TestLoginRefreshedPerRequest: a stored Anthropic login about to expire
// is refreshed when a request is sent, and the request carries the new
// token; the environment is not used while a login is stored.
func TestLoginRefreshedPerRequest(t *testing.T) {
	srv := authtest.New(t)
	dir := t.TempDir()
	refresh := srv.IssueRefresh("anthropic")
	writeFile(t, dir, "auth.json", fmt.Sprintf(`{"anthropic": {"type": "oauth", "access": "sk-ant-oat01-old", "refresh": %q, "expires": %d},
  "xai": {"type": "oauth", "access": "x-old", "refresh": "r", "expires": 1000}}`, refresh, time.Now().Add(2*time.Minute).UnixMilli()))
	p, fakes := adapters(allAPIs...)
	store := auth.Open(filepath.Join(dir, "auth.json"), &auth.Options{Server: srv.URL})
	reg, errs := Load(LoadOptions{AgentDir: dir, Providers: p, Auth: store, Env: envOf(map[string]string{"ANTHROPIC_API_KEY": "env-key"})})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	defer reg.Close()
	if k, _ := reg.Key("anthropic"); k != "sk-ant-oat01-old" {
		t.Fatalf("Key %q (no refresh when listing)", k)
	}
	m, _ := reg.Find("anthropic", reg.All()[0].ID)
	entry, _ := reg.Provider("anthropic")
	entry.Provider.Stream(t.Context(), &ai.Request{Model: m, APIKey: "sk-ant-oat01-old"}, func(ai.AssistantEvent) {})
	reqs := fakes[APIAnthropicMessages].reqs
	if len(reqs) != 1 || !strings.HasPrefix(reqs[0].APIKey, "sk-ant-oat01-access-") || srv.Refreshes("anthropic") != 1 {
		t.Fatalf("request key %q after %d refreshes", reqs[0].APIKey, srv.Refreshes("anthropic"))
	}
	if k, _ := reg.ResolveKey(t.Context(), "anthropic", 0); k != reqs[0].APIKey {
		t.Fatalf("ResolveKey %q", k)
	}

	// --api-key: the login is not used.
	reg.SetAPIKeyOverride("anthropic", "cli")
	entry.Provider.Stream(t.Context(), &ai.Request{Model: m, APIKey: "cli"}, func(ai.AssistantEvent) {})
	if k := fakes[APIAnthropicMessages].reqs[1].APIKey; k != "cli" {
		t.Fatalf("with --api-key: %q", k)
	}

	// An expired login Pisces cannot refresh is an error, not the env.
	if _, err := reg.ResolveKey(t.Context(), "xai", 0); err == nil || !strings.Contains(err.Error(), "cannot refresh") {
		t.Fatalf("xai: %v", err)
	}

	// A failed refresh is the request's error; the login stays.
	srv.Set(func(s *authtest.Server) { s.FailRefresh = true })
	reg.SetAPIKeyOverride("anthropic", "")
	store2 := auth.Open(filepath.Join(dir, "auth.json"), &auth.Options{Server: srv.URL, Now: func() time.Time { return time.Now().Add(24 * time.Hour) }})
	reg2, _ := Load(LoadOptions{AgentDir: dir, Providers: p, Auth: store2})
	entry2, _ := reg2.Provider("anthropic")
	msg := entry2.Provider.Stream(t.Context(), &ai.Request{Model: m}, func(ai.AssistantEvent) {})
	if msg == nil || msg.StopReason != ai.StopError || !strings.Contains(msg.ErrorMessage, "OAuth refresh failed for anthropic") {
		t.Fatalf("message %+v", msg)
	}
	if c, _ := store2.Get(t.Context(), "anthropic"); c == nil || !c.IsOAuth() {
		t.Fatalf("login lost: %+v", c)
	}
}

// TestAnthropicEnvRanking: with nothing stored, ANTHROPIC_AUTH_TOKEN comes
// first and is sent as a bearer token (not as x-api-key, not in the
// subscription mode), then ANTHROPIC_OAUTH_TOKEN, then ANTHROPIC_API_KEY.
func TestAnthropicEnvRanking(t *testing.T) {
	dir := t.TempDir()
	p, fakes := adapters(allAPIs...)
	env := map[string]string{"ANTHROPIC_AUTH_TOKEN": "gw-token", "ANTHROPIC_OAUTH_TOKEN": "sk-ant-oat01-env", "ANTHROPIC_API_KEY": "sk-ant-api03-env"}
	reg, _ := Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(env)})
	if k, _ := reg.Key("anthropic"); k != "gw-token" {
		t.Fatalf("key %q", k)
	}
	m := reg.All()[0]
	entry, _ := reg.Provider("anthropic")
	entry.Provider.Stream(t.Context(), &ai.Request{Model: m, APIKey: "gw-token"}, func(ai.AssistantEvent) {})
	got := fakes[APIAnthropicMessages].reqs[0]
	if got.APIKey != "" || got.Model.Headers["Authorization"] != "Bearer gw-token" || m.Headers["Authorization"] != "" {
		t.Fatalf("sent key %q headers %v", got.APIKey, got.Model.Headers)
	}
	delete(env, "ANTHROPIC_AUTH_TOKEN")
	if k, _ := reg.Key("anthropic"); k != "sk-ant-oat01-env" {
		t.Fatalf("key %q", k)
	}
	delete(env, "ANTHROPIC_OAUTH_TOKEN")
	if k, _ := reg.Key("anthropic"); k != "sk-ant-api03-env" {
		t.Fatalf("key %q", k)
	}
	if v := reg.KeyVariable("anthropic"); v != "ANTHROPIC_API_KEY" {
		t.Fatalf("KeyVariable %q", v)
	}
}

// TestCopilotLogin: a Copilot login limits the models to the account's
// and its requests carry the Copilot token as a bearer, the API host the
// token names and the editor headers.
func TestCopilotLogin(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "auth.json", fmt.Sprintf(`{"github-copilot": {"type": "oauth", "refresh": "gho_x", "access": "tid=1;proxy-ep=proxy.business.githubcopilot.com;sku=x",
  "expires": %d, "availableModelIds": ["claude-sonnet-4.6", "gpt-6-sol"]}}`, time.Now().Add(time.Hour).UnixMilli()))
	p, fakes := adapters(allAPIs...)
	reg, errs := Load(LoadOptions{AgentDir: dir, Providers: p})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	entry, _ := reg.Provider("github-copilot")
	var ids []string
	for _, m := range entry.Models {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "claude-sonnet-4.6,gpt-6-sol" {
		t.Fatalf("models %v", ids)
	}
	for _, id := range ids {
		m, _ := reg.Find("github-copilot", id)
		key, _ := reg.Key("github-copilot")
		msgs := []ai.Message{&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text("look"), ai.Image("AAAA", "image/png"))},
			&ai.AssistantMessage{Role: ai.RoleAssistant}}
		entry.Provider.Stream(t.Context(), &ai.Request{Model: m, APIKey: key, Messages: msgs}, func(ai.AssistantEvent) {})
		reqs := fakes[m.API].reqs
		got := reqs[len(reqs)-1]
		h := got.Model.Headers
		if got.Model.BaseURL != "https://api.business.githubcopilot.com" || h["Editor-Version"] != "vscode/1.107.0" ||
			h["X-Initiator"] != "agent" || h["Openai-Intent"] != "conversation-edits" || h["Copilot-Vision-Request"] != "true" {
			t.Errorf("%s: base %s headers %v", id, got.Model.BaseURL, h)
		}
		bearer := got.APIKey
		if m.API == APIAnthropicMessages {
			bearer = strings.TrimPrefix(h["Authorization"], "Bearer ")
			if got.APIKey != "" {
				t.Errorf("%s: x-api-key would be sent: %q", id, got.APIKey)
			}
		}
		if bearer != key {
			t.Errorf("%s: bearer %q", id, bearer)
		}
	}
}

// TestRebuildAfterLogin: the Copilot models built before a login list the
// whole catalogue; after the login and Rebuild, the account's.
func TestRebuildAfterLogin(t *testing.T) {
	dir := t.TempDir()
	p, _ := adapters(allAPIs...)
	store := auth.Open(filepath.Join(dir, "auth.json"), &auth.Options{})
	reg, errs := Load(LoadOptions{AgentDir: dir, Providers: p, Auth: store, Env: envOf(nil)})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	defer reg.Close()
	before, _ := reg.Provider("github-copilot")
	if len(before.Models) < 3 {
		t.Fatalf("%d models before the login", len(before.Models))
	}
	if err := store.Set(t.Context(), "github-copilot", &auth.Credential{Type: auth.TypeOAuth, Refresh: "gho_x",
		Access: "tid=1;proxy-ep=proxy.individual.githubcopilot.com", Expires: time.Now().Add(time.Hour).UnixMilli(),
		AvailableModelIDs: []string{"gpt-6-sol"}}); err != nil {
		t.Fatal(err)
	}
	reg.Rebuild("github-copilot")
	after, _ := reg.Provider("github-copilot")
	if len(after.Models) != 1 || after.Models[0].ID != "gpt-6-sol" {
		t.Fatalf("models after the login: %d", len(after.Models))
	}
	if len(before.Models) < 3 {
		t.Fatal("the entry handed out before changed")
	}
	var avail []string
	for _, m := range reg.Available() {
		if m.Provider == "github-copilot" {
			avail = append(avail, m.ID)
		}
	}
	if strings.Join(avail, ",") != "gpt-6-sol" {
		t.Fatalf("available %v", avail)
	}
}
