package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
)

// fakeProvider records the requests it is given.
type fakeProvider struct {
	api  string
	mu   sync.Mutex
	reqs []*ai.Request
}

func (f *fakeProvider) Stream(ctx context.Context, req *ai.Request, emit func(ai.AssistantEvent)) *ai.AssistantMessage {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	return nil
}

// adapters returns a Providers func with an adapter for each of apis.
func adapters(apis ...string) (func(string) ai.Provider, map[string]*fakeProvider) {
	m := map[string]*fakeProvider{}
	for _, a := range apis {
		m[a] = &fakeProvider{api: a}
	}
	return func(api string) ai.Provider {
		if p, ok := m[api]; ok {
			return p
		}
		return nil
	}, m
}

var allAPIs = []string{APIAnthropicMessages, APIOpenAICompletions, APIOpenAIResponses, APIGoogleGenerativeAI, APICodexResponses}

// envOf returns an Env func over a fixed map.
func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, dir string, env map[string]string) *Registry {
	t.Helper()
	p, _ := adapters(allAPIs...)
	reg, errs := Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(env)})
	for _, e := range errs {
		t.Errorf("load: %v", e)
	}
	return reg
}

func mustFind(t *testing.T, r *Registry, provider, id string) *ai.Model {
	t.Helper()
	m, ok := r.Find(provider, id)
	if !ok {
		t.Fatalf("%s/%s not found", provider, id)
	}
	return m
}

func TestCatalogueValid(t *testing.T) {
	cat, err := Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"anthropic", "openai", "google", "openrouter", "groq", "cerebras", "xai", "deepseek", "mistral", "together", "fireworks", "ollama", "lmstudio", "vllm", "llama.cpp"}
	got := map[string]*CatalogueProvider{}
	for i := range cat {
		got[cat[i].Name] = &cat[i]
	}
	for _, n := range want {
		p := got[n]
		if p == nil {
			t.Errorf("provider %s missing", n)
			continue
		}
		if p.Local != (len(p.Models) == 0) {
			t.Errorf("%s: local=%v with %d models", n, p.Local, len(p.Models))
		}
		for _, m := range p.Models {
			am := m.model(p)
			if am.Provider != n || am.API == "" || am.BaseURL == "" {
				t.Errorf("%s/%s: incomplete %+v", n, m.ID, am)
			}
			if am.Cost.Input == 0 && am.Cost.Output == 0 {
				t.Errorf("%s/%s: no price", n, m.ID)
			}
			if len(am.Compat) > 0 && !json.Valid(am.Compat) {
				t.Errorf("%s/%s: bad compat", n, m.ID)
			}
		}
	}
	apis := map[string]string{"anthropic": APIAnthropicMessages, "openai": APIOpenAIResponses, "google": APIGoogleGenerativeAI, "groq": APIOpenAICompletions, "ollama": APIOpenAICompletions}
	for n, api := range apis {
		if got[n].API != api {
			t.Errorf("%s: api %s, want %s", n, got[n].API, api)
		}
	}
	urls := map[string]string{
		"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1",
		"openrouter": "https://openrouter.ai/api/v1", "groq": "https://api.groq.com/openai/v1",
		"cerebras": "https://api.cerebras.ai/v1", "xai": "https://api.x.ai/v1", "deepseek": "https://api.deepseek.com/v1",
		"mistral": "https://api.mistral.ai/v1", "together": "https://api.together.xyz/v1",
		"fireworks": "https://api.fireworks.ai/inference/v1", "ollama": "http://127.0.0.1:11434/v1",
		"lmstudio": "http://127.0.0.1:1234/v1", "vllm": "http://127.0.0.1:8000/v1", "llama.cpp": "http://127.0.0.1:8080/v1",
	}
	for n, u := range urls {
		if got[n].BaseURL != u {
			t.Errorf("%s: baseUrl %s, want %s", n, got[n].BaseURL, u)
		}
	}
}

func TestCatalogueRejectsBadEntries(t *testing.T) {
	bad := []string{
		`{"providers":[{"name":"x","api":"a","baseUrl":"https://x","env":["K"],"models":[{"id":"m","name":"M","input":["text"],"contextWindow":0,"maxTokens":1,"cost":{}}]}]}`,
		`{"providers":[{"name":"x","api":"a","baseUrl":"https://x","env":["K"],"models":[{"id":"m","name":"M","input":["audio"],"contextWindow":10,"maxTokens":1,"cost":{}}]}]}`,
		`{"providers":[{"name":"x","api":"a","baseUrl":"https://x","env":["K"],"models":[{"id":"m","name":"M","input":["text"],"contextWindow":10,"maxTokens":1,"cost":{},"extraThinkingLevels":["max"]}]}]}`,
		`{"providers":[{"name":"x","api":"a","baseUrl":"ftp://x","env":["K"],"models":[]}]}`,
		`{"providers":[{"name":"x","api":"a","baseUrl":"https://x","models":[]}]}`,
		`{"providers":[{"name":"x","api":"a","baseUrl":"https://x","env":["K"],"typo":1,"models":[]}]}`,
	}
	for i, b := range bad {
		if _, err := parseCatalogue([]byte(b)); err == nil {
			t.Errorf("case %d: accepted", i)
		}
	}
}

func TestLoadBuiltins(t *testing.T) {
	reg := load(t, t.TempDir(), nil)
	m := mustFind(t, reg, "anthropic", "claude-opus-4-7")
	if m.API != APIAnthropicMessages || m.BaseURL != "https://api.anthropic.com" || m.ContextWindow != 1000000 || !m.Reasoning {
		t.Errorf("opus 4.7: %+v", m)
	}
	if p, _ := reg.Provider("anthropic"); p.Models[0].ID != "claude-sonnet-4-6" {
		t.Errorf("anthropic default %s", p.Models[0].ID)
	}
	g := mustFind(t, reg, "cerebras", "gpt-oss-120b")
	var compat map[string]any
	if err := json.Unmarshal(g.Compat, &compat); err != nil || compat["supportsStore"] != false {
		t.Errorf("cerebras compat %s", g.Compat)
	}
	// All is sorted by provider, then id.
	all := reg.All()
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		if a.Provider > b.Provider || (a.Provider == b.Provider && a.ID > b.ID) {
			t.Fatalf("All not sorted at %d: %s/%s then %s/%s", i, a.Provider, a.ID, b.Provider, b.ID)
		}
	}
	// Each built-in provider gets the adapter of its API.
	p, fakes := adapters(allAPIs...)
	reg, _ = Load(LoadOptions{Providers: p, Env: envOf(nil)})
	for name, api := range map[string]string{"anthropic": APIAnthropicMessages, "openai": APIOpenAIResponses, "google": APIGoogleGenerativeAI, "groq": APIOpenAICompletions, "vllm": APIOpenAICompletions} {
		e, ok := reg.Provider(name)
		if !ok || e.Provider != ai.Provider(fakes[api]) {
			t.Errorf("%s: adapter %v", name, e)
		}
	}
}

func TestLoadSkipsProvidersWithoutAdapter(t *testing.T) {
	p, _ := adapters(APIAnthropicMessages)
	reg, errs := Load(LoadOptions{Providers: p, Env: envOf(nil)})
	if _, ok := reg.Provider("anthropic"); !ok {
		t.Error("anthropic missing")
	}
	for _, n := range []string{"openai", "google", "groq", "ollama"} {
		if _, ok := reg.Provider(n); ok {
			t.Errorf("%s registered without adapter", n)
		}
	}
	text := joinErrs(errs)
	for _, want := range []string{`"openai": no adapter for API "openai-responses"`, `"google": no adapter for API "google-generative-ai"`, `"ollama": no adapter`} {
		if !strings.Contains(text, want) {
			t.Errorf("errors lack %q:\n%s", want, text)
		}
	}
	// nil Providers: listing only, no errors.
	reg, errs = Load(LoadOptions{Env: envOf(nil)})
	if len(errs) != 0 || len(reg.All()) == 0 {
		t.Errorf("nil Providers: %v, %d models", errs, len(reg.All()))
	}
}

func joinErrs(errs []error) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error())
		b.WriteString("\n")
	}
	return b.String()
}

func TestModelsJSONCustomProviders(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "models.json", `{
  "providers": {
    "my-proxy": {
      "baseUrl": "https://proxy.example.com/v1",
      "api": "openai-completions",
      "apiKey": "MY_PROXY_KEY",
      "headers": {"x-team": "TEAM_VAR", "x-lit": "plain"},
      "compat": {"supportsDeveloperRole": false, "maxTokensField": "max_tokens"},
      "models": [
        {"id": "big-model", "name": "Big", "reasoning": true, "input": ["text", "image"], "contextWindow": 64000, "maxTokens": 8000,
         "cost": {"input": 1, "output": 2}, "compat": {"maxTokensField": "max_completion_tokens"}, "thinkingLevelMap": {"xhigh": "xhigh", "max": null}},
        {"id": "small-model"}
      ]
    },
    "claude-proxy": {
      "baseUrl": "https://claude.example.com",
      "api": "anthropic-messages",
      "apiKey": "literal-key",
      "authHeader": true,
      "models": [{"id": "claude-custom", "reasoning": true}]
    }
  }
}`)
	p, fakes := adapters(allAPIs...)
	reg, errs := Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(map[string]string{"MY_PROXY_KEY": "sk-proxy", "TEAM_VAR": "blue"})})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	big := mustFind(t, reg, "my-proxy", "big-model")
	if big.API != APIOpenAICompletions || big.BaseURL != "https://proxy.example.com/v1" || big.Name != "Big" || big.ContextWindow != 64000 || big.MaxTokens != 8000 || big.Cost.Input != 1 || big.Cost.Output != 2 || len(big.Input) != 2 {
		t.Errorf("big: %+v", big)
	}
	if big.Headers["x-team"] != "blue" || big.Headers["x-lit"] != "plain" {
		t.Errorf("headers %v", big.Headers)
	}
	var compat map[string]any
	_ = json.Unmarshal(big.Compat, &compat)
	if compat["supportsDeveloperRole"] != false || compat["maxTokensField"] != "max_completion_tokens" {
		t.Errorf("compat %s", big.Compat)
	}
	if got := LevelsFor(big); strings.Join(got, ",") != "off,minimal,low,medium,high,xhigh" {
		t.Errorf("levels %v", got)
	}
	small := mustFind(t, reg, "my-proxy", "small-model")
	if small.Name != "small-model" || small.Reasoning || small.ContextWindow != 128000 || small.MaxTokens != 16384 || strings.Join(small.Input, ",") != "text" || small.Cost != (ai.ModelCost{}) {
		t.Errorf("defaults: %+v", small)
	}
	if k, ok := reg.Key("my-proxy"); !ok || k != "sk-proxy" {
		t.Errorf("my-proxy key %q %v", k, ok)
	}
	m, err := reg.Resolve("", "my-proxy/big-model")
	if err != nil || m != big {
		t.Errorf("resolve: %v %v", m, err)
	}

	cl := mustFind(t, reg, "claude-proxy", "claude-custom")
	if cl.API != APIAnthropicMessages || cl.BaseURL != "https://claude.example.com" {
		t.Errorf("claude-custom %+v", cl)
	}
	if k, _ := reg.Key("claude-proxy"); k != "literal-key" {
		t.Errorf("claude-proxy key %q", k)
	}
	// authHeader adds the bearer header at request time.
	e, _ := reg.Provider("claude-proxy")
	e.Provider.Stream(context.Background(), &ai.Request{Model: cl, APIKey: "literal-key"}, func(ai.AssistantEvent) {})
	reqs := fakes[APIAnthropicMessages].reqs
	if len(reqs) != 1 || reqs[0].Model.Headers["Authorization"] != "Bearer literal-key" || cl.Headers["Authorization"] != "" {
		t.Errorf("auth header: %+v", reqs)
	}
	if m, err := reg.Resolve("", "claude-custom"); err != nil || m != cl {
		t.Errorf("resolve claude-custom: %v %v", m, err)
	}
}

func TestModelsJSONMixedAPIs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "models.json", `{"providers":{"gw":{"baseUrl":"https://gw.example.com","api":"openai-completions","apiKey":"k",
  "models":[{"id":"a"},{"id":"b","api":"anthropic-messages"},{"id":"c","api":"bedrock-converse-stream"}]}}}`)
	p, fakes := adapters(allAPIs...)
	reg, errs := Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(nil)})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `no adapter for API "bedrock-converse-stream"`) {
		t.Fatalf("errs %v", errs)
	}
	e, _ := reg.Provider("gw")
	if len(e.Models) != 2 {
		t.Fatalf("models %d", len(e.Models))
	}
	for _, id := range []string{"a", "b"} {
		m := mustFind(t, reg, "gw", id)
		e.Provider.Stream(context.Background(), &ai.Request{Model: m}, func(ai.AssistantEvent) {})
	}
	if len(fakes[APIOpenAICompletions].reqs) != 1 || len(fakes[APIAnthropicMessages].reqs) != 1 {
		t.Error("requests not routed by API")
	}
}

func TestModelsJSONBuiltinOverrides(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "models.json", `{
  "providers": {
    "anthropic": {"baseUrl": "https://my-proxy.example.com"},
    "openrouter": {
      "headers": {"x-title": "pisces"},
      "modelOverrides": {
        "anthropic/claude-sonnet-4.6": {"name": "Sonnet via Bedrock", "cost": {"input": 9}, "contextWindow": 500000,
          "compat": {"openRouterRouting": {"only": ["amazon-bedrock"]}}},
        "no/such-model": {"name": "ignored"}
      },
      "models": [{"id": "openai/gpt-oss-120b", "reasoning": true}]
    },
    "openai": {"models": [{"id": "gpt-5.4", "name": "Replaced", "contextWindow": 1000}]},
    "ollama": {"baseUrl": "http://10.0.0.5:11434/v1", "models": [{"id": "qwen3:32b", "reasoning": true, "contextWindow": 40960}]}
  }
}`)
	reg := load(t, dir, nil)
	for _, m := range reg.All() {
		if m.Provider == "anthropic" && m.BaseURL != "https://my-proxy.example.com" {
			t.Errorf("%s: baseUrl %s", m.ID, m.BaseURL)
		}
	}
	if n := len(mustProvider(t, reg, "anthropic").Models); n < 5 {
		t.Errorf("anthropic lost models: %d", n)
	}
	s := mustFind(t, reg, "openrouter", "anthropic/claude-sonnet-4.6")
	if s.Name != "Sonnet via Bedrock" || s.Cost.Input != 9 || s.Cost.Output != 15 || s.ContextWindow != 500000 || s.Headers["x-title"] != "pisces" {
		t.Errorf("override: %+v", s)
	}
	if !strings.Contains(string(s.Compat), "amazon-bedrock") {
		t.Errorf("compat %s", s.Compat)
	}
	if o := mustFind(t, reg, "openrouter", "openai/gpt-oss-120b"); !o.Reasoning || o.API != APIOpenAICompletions || o.BaseURL != "https://openrouter.ai/api/v1" {
		t.Errorf("upserted %+v", o)
	}
	g := mustFind(t, reg, "openai", "gpt-5.4")
	if g.Name != "Replaced" || g.ContextWindow != 1000 || g.API != APIOpenAIResponses || g.Reasoning {
		t.Errorf("replaced: %+v", g)
	}
	q := mustFind(t, reg, "ollama", "qwen3:32b")
	if q.BaseURL != "http://10.0.0.5:11434/v1" || !q.Reasoning || q.ContextWindow != 40960 {
		t.Errorf("ollama model %+v", q)
	}
	if any := mustFind(t, reg, "ollama", "llama3.2"); any.BaseURL != "http://10.0.0.5:11434/v1" {
		t.Errorf("ollama any-model baseUrl %s", any.BaseURL)
	}
}

func mustProvider(t *testing.T, r *Registry, name string) *ProviderEntry {
	t.Helper()
	p, ok := r.Provider(name)
	if !ok {
		t.Fatalf("provider %s missing", name)
	}
	return p
}

func TestMalformedModelsJSON(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "models.json", "{\n  \"providers\": {\n    \"x\": {\"baseUrl\": \"http://h\",}\n  }\n}\n")
	p, _ := adapters(allAPIs...)
	reg, errs := Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(nil)})
	if len(errs) != 1 {
		t.Fatalf("errs %v", errs)
	}
	msg := errs[0].Error()
	if !strings.Contains(msg, filepath.Join(dir, "models.json")) || !strings.Contains(msg, "line 3, column 33") {
		t.Errorf("error %q lacks file and position", msg)
	}
	if _, ok := reg.Find("anthropic", "claude-sonnet-4-6"); !ok {
		t.Error("built-ins not loaded")
	}

	writeFile(t, dir, "models.json", "{\"providers\": {\"x\": {\"baseUrl\": \"http://h\",\n \"models\": [{\"id\": \"m\", \"contextWindow\": \"big\"}]}}}")
	_, errs = Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(nil)})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "line 2, column") || !strings.Contains(errs[0].Error(), "contextWindow") {
		t.Errorf("type error: %v", errs)
	}

	writeFile(t, dir, "models.json", `{"providers": {"x": {"baseUrl": "http://h"`)
	_, errs = Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(nil)})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "line 1") {
		t.Errorf("truncated: %v", errs)
	}

	// Semantic problems skip the provider, not the file.
	writeFile(t, dir, "models.json", `{"providers": {
  "nourl": {"api": "openai-completions", "models": [{"id": "m"}]},
  "noapi": {"baseUrl": "https://h", "models": [{"id": "m"}]},
  "mixed": {"baseUrl": "https://h", "api": "openai-completions", "models": [{"id": "ok"}, {"id": ""}, {"id": "bad-input", "input": ["video"]}]},
  "good": {"baseUrl": "https://h", "api": "openai-completions", "apiKey": "k", "models": [{"id": "m"}]}}}`)
	reg, errs = Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(nil)})
	text := joinErrs(errs)
	if !strings.Contains(text, `"nourl": baseUrl is required`) || !strings.Contains(text, `"noapi"`) || !strings.Contains(text, "api is required") {
		t.Errorf("errors: %s", text)
	}
	if _, ok := reg.Find("good", "m"); !ok {
		t.Error("good provider missing")
	}
	if !strings.Contains(text, `"mixed": model 2: id is required; model 3: "bad-input": unknown input kind "video"`) {
		t.Errorf("mixed errors: %s", text)
	}
	if e := mustProvider(t, reg, "mixed"); len(e.Models) != 1 || e.Models[0].ID != "ok" {
		t.Errorf("mixed kept %v", e.Models)
	}
}

func TestValueResolution(t *testing.T) {
	res := newResolver(envOf(map[string]string{"MY_KEY": "from-env"}), 0)
	cases := map[string]string{
		"MY_KEY":                  "from-env",
		"UNSET_VAR":               "UNSET_VAR",
		"sk-literal-123":          "sk-literal-123",
		"!echo '  from-cmd  '":    "from-cmd",
		"!printf 'a\\nb\\n'":      "a\nb",
		"!exit 3":                 "",
		"":                        "",
		"! echo spaced":           "spaced",
		"!echo $((40+2))":         "42",
		"!echo first; echo again": "first\nagain",
	}
	for in, want := range cases {
		if got := res.value(in); got != want {
			t.Errorf("value(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := res.valueErr("!exit 3"); err == nil {
		t.Error("failing command: no error")
	}
}

func TestCommandCachedAndTimeout(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(dir, "n")
	res := newResolver(envOf(nil), 0)
	cmd := "!echo x >> " + counter + "; echo key"
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v := res.value(cmd); v != "key" {
				t.Errorf("value %q", v)
			}
		}()
	}
	wg.Wait()
	data, _ := os.ReadFile(counter)
	if n := strings.Count(string(data), "x"); n != 1 {
		t.Errorf("command ran %d times", n)
	}

	slow := newResolver(envOf(nil), 200*1e6) // 200 ms
	v, err := slow.valueErr("!sleep 5; echo late")
	if v != "" || err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("timeout: %q %v", v, err)
	}
}

func TestKeyOrder(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"OPENAI_API_KEY": "env-openai", "GROQ_API_KEY": "env-groq", "MISTRAL_API_KEY": "env-mistral", "ANTHROPIC_API_KEY": "env-ant-api", "ANTHROPIC_OAUTH_TOKEN": "env-ant-oauth", "AUTH_VAR": "auth-from-var"}
	writeFile(t, dir, "auth.json", `{
  "openai": {"type": "api_key", "key": "auth-openai"},
  "groq": {"type": "api_key", "key": "AUTH_VAR"},
  "google": {"type": "oauth", "access": "oauth-access", "refresh": "r", "expires": 0},
  "xai": {"type": "oauth", "access": "expired", "refresh": "r", "expires": 1000},
  "cerebras": {"type": "api_key", "key": "!echo auth-cmd"}
}`)
	writeFile(t, dir, "models.json", `{"providers": {
  "openai": {"apiKey": "mj-openai"}, "mistral": {"apiKey": "mj-mistral"},
  "deepseek": {"apiKey": "!echo mj-cmd"}, "together": {"apiKey": "UNSET_NAME_USED_LITERALLY"},
  "xai": {"apiKey": "mj-xai"}}}`)
	p, _ := adapters(allAPIs...)
	reg, errs := Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(env)})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := map[string]string{
		"openai":    "auth-openai",   // auth.json > models.json > env
		"groq":      "auth-from-var", // auth.json value resolved as env name
		"google":    "oauth-access",  // OAuth access token
		"xai":       "expired",       // a stored login owns the provider, expired or not
		"cerebras":  "auth-cmd",      // auth.json !command
		"mistral":   "mj-mistral",    // models.json > env
		"anthropic": "env-ant-oauth", // ANTHROPIC_OAUTH_TOKEN > ANTHROPIC_API_KEY
		"deepseek":  "mj-cmd",        // models.json !command
		"together":  "UNSET_NAME_USED_LITERALLY",
	}
	for prov, w := range want {
		if k, ok := reg.Key(prov); !ok || k != w {
			t.Errorf("%s: key %q %v, want %q", prov, k, ok, w)
		}
	}
	if _, ok := reg.Key("fireworks"); ok {
		t.Error("fireworks has no key but resolves")
	}
	if k, ok := reg.Key("ollama"); !ok || k != "" {
		t.Errorf("ollama: %q %v", k, ok)
	}

	// --api-key wins, for its provider or for all.
	reg, _ = Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(env), APIKeyOverride: "cli-key", OverrideProvider: "openai"})
	if k, _ := reg.Key("openai"); k != "cli-key" {
		t.Errorf("override: %q", k)
	}
	if k, _ := reg.Key("groq"); k != "auth-from-var" {
		t.Errorf("override leaked to groq: %q", k)
	}
	reg, _ = Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(env), APIKeyOverride: "cli-key"})
	if k, ok := reg.Key("fireworks"); !ok || k != "cli-key" {
		t.Errorf("global override: %q %v", k, ok)
	}
	reg.SetAPIKeyOverride("*", "")
	reg.SetAPIKeyOverride("fireworks", "fw")
	if k, _ := reg.Key("fireworks"); k != "fw" {
		t.Errorf("SetAPIKeyOverride: %q", k)
	}
	if k, _ := reg.Key("openai"); k != "auth-openai" {
		t.Errorf("after clearing: %q", k)
	}
}

func TestKeyFuncIsLazy(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	writeFile(t, dir, "models.json", `{"providers": {"deepseek": {"apiKey": "!touch `+marker+`; echo k"}}}`)
	reg := load(t, dir, nil)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("command ran at load time")
	}
	if k, _ := reg.Key("deepseek"); k != "k" {
		t.Errorf("key %q", k)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("command did not run")
	}
}

func TestAvailable(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "models.json", `{"providers": {
  "ollama": {"models": [{"id": "qwen3"}]},
  "lan": {"baseUrl": "http://localhost:9999/v1", "api": "openai-completions", "models": [{"id": "local-one"}]},
  "remote": {"baseUrl": "https://remote.example.com/v1", "api": "openai-completions", "models": [{"id": "far"}]}}}`)
	reg := load(t, dir, map[string]string{"GROQ_API_KEY": "g"})
	provs := map[string]bool{}
	for _, m := range reg.Available() {
		provs[m.Provider] = true
	}
	for _, p := range []string{"groq", "ollama", "lan"} {
		if !provs[p] {
			t.Errorf("%s not available", p)
		}
	}
	for _, p := range []string{"anthropic", "openai", "remote", "fireworks"} {
		if provs[p] {
			t.Errorf("%s available without key", p)
		}
	}
	if len(reg.Available()) >= len(reg.All()) {
		t.Error("Available not narrower than All")
	}
}

func TestResolve(t *testing.T) {
	reg := load(t, t.TempDir(), map[string]string{"ANTHROPIC_API_KEY": "a"})
	cases := []struct{ provider, pattern, want string }{
		{"", "anthropic/claude-opus-4-6", "anthropic/claude-opus-4-6"},
		{"", "ANTHROPIC/claude-opus-4-6", "anthropic/claude-opus-4-6"},
		{"", "claude-opus-4-6", "anthropic/claude-opus-4-6"},
		{"", "gpt-4.1-MINI", "openai/gpt-4.1-mini"},
		{"anthropic", "claude-haiku-4-5", "anthropic/claude-haiku-4-5"},
		{"anthropic", "anthropic/claude-haiku-4-5", "anthropic/claude-haiku-4-5"},
		{"", "anthropic/haiku", "anthropic/claude-haiku-4-5"},
		{"", "opus", "anthropic/claude-opus-4-8"},       // keyed, then highest id
		{"", "*sonnet*", "anthropic/claude-sonnet-4-6"}, // glob, keyed first
		{"", "anthropic/claude-opus-4-?", "anthropic/claude-opus-4-8"},
		{"openai", "gpt-5.?-codex", "openai/gpt-5.3-codex"},
		{"", "Gemini 2.5 Flash Lite", "google/gemini-2.5-flash-lite"}, // by name
		{"", "moonshotai/kimi-k2-instruct-0905", "groq/moonshotai/kimi-k2-instruct-0905"},
		{"openrouter", "anthropic/claude-sonnet-4.6", "openrouter/anthropic/claude-sonnet-4.6"},
		{"", "anthropic/claude-sonnet-4.6", "openrouter/anthropic/claude-sonnet-4.6"},
		{"ollama", "qwen3", "ollama/qwen3"},
		{"", "ollama/qwen3:8b", "ollama/qwen3:8b"},
		{"vllm", "Qwen/Qwen3-Coder-30B", "vllm/Qwen/Qwen3-Coder-30B"},
	}
	for _, c := range cases {
		m, err := reg.Resolve(c.provider, c.pattern)
		if err != nil {
			t.Errorf("Resolve(%q, %q): %v", c.provider, c.pattern, err)
			continue
		}
		if got := m.Provider + "/" + m.ID; got != c.want {
			t.Errorf("Resolve(%q, %q) = %s, want %s", c.provider, c.pattern, got, c.want)
		}
	}
	for _, c := range []struct{ provider, pattern string }{
		{"", "no-such-model-xyz"},
		{"anthropic", "gpt-5"},
		{"nosuch", "x"},
		{"", ""},
		{"ollama", "*"},
	} {
		if m, err := reg.Resolve(c.provider, c.pattern); err == nil {
			t.Errorf("Resolve(%q, %q) = %s/%s, want error", c.provider, c.pattern, m.Provider, m.ID)
		}
	}

	// "openai/gpt-oss-120b" is no OpenAI model but an id on groq and
	// together: ambiguous until exactly one of them has a key.
	if _, err := reg.Resolve("", "openai/gpt-oss-120b"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("openai/gpt-oss-120b: %v", err)
	}
	groq := load(t, t.TempDir(), map[string]string{"GROQ_API_KEY": "g"})
	if m, err := groq.Resolve("", "openai/gpt-oss-120b"); err != nil || m.Provider != "groq" {
		t.Errorf("openai/gpt-oss-120b with a groq key: %v %v", m, err)
	}

	// Without any key, the alias/highest rule decides (across providers:
	// GitHub Copilot lists a higher Sonnet than Anthropic's catalogue);
	// with a key, the keyed provider's model wins.
	bare := load(t, t.TempDir(), nil)
	if m, _ := bare.Resolve("", "sonnet"); m == nil || m.Provider+"/"+m.ID != "github-copilot/claude-sonnet-5.5" {
		t.Errorf("sonnet without keys: %v", m)
	}
	keyed := load(t, t.TempDir(), map[string]string{"ANTHROPIC_API_KEY": "k"})
	if m, _ := keyed.Resolve("", "sonnet"); m == nil || m.Provider+"/"+m.ID != "anthropic/claude-sonnet-4-6" {
		t.Errorf("sonnet with an Anthropic key: %v", m)
	}

	// A local model, with defaults, is the same model each time.
	a, _ := reg.Resolve("ollama", "qwen3")
	b, ok := reg.Find("ollama", "qwen3")
	if !ok || a != b || a.ContextWindow != DefaultContextWindow || a.MaxTokens != DefaultMaxTokens || a.Reasoning || strings.Join(a.Input, ",") != "text" || a.API != APIOpenAICompletions || a.BaseURL != "http://127.0.0.1:11434/v1" {
		t.Errorf("local model %+v", a)
	}
	if !strings.Contains(string(a.Compat), "max_tokens") {
		t.Errorf("local compat %s", a.Compat)
	}
	for _, m := range reg.All() {
		if m.Provider == "ollama" {
			t.Error("synthesised model listed by All")
		}
	}
	if _, ok := reg.Find("anthropic", "claude-nonexistent"); ok {
		t.Error("Find invented an anthropic model")
	}
}

func TestResolveAmbiguousExactID(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "models.json", `{"providers": {
  "one": {"baseUrl": "https://one.example.com", "api": "openai-completions", "apiKey": "ONE_KEY", "models": [{"id": "shared"}]},
  "two": {"baseUrl": "https://two.example.com", "api": "openai-completions", "apiKey": "TWO_KEY", "models": [{"id": "shared"}]}}}`)
	p, _ := adapters(allAPIs...)
	// Keys are literal fallbacks here, so both resolve: ambiguous.
	reg, _ := Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(nil)})
	if _, err := reg.Resolve("", "shared"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("want ambiguity, got %v", err)
	}
	if m, err := reg.Resolve("two", "shared"); err != nil || m.Provider != "two" {
		t.Errorf("explicit provider: %v %v", m, err)
	}
}

func TestResolveScope(t *testing.T) {
	reg := load(t, t.TempDir(), nil)
	ms, err := reg.ResolveScope("anthropic/claude-opus-*")
	if err != nil || len(ms) < 4 {
		t.Fatalf("scope: %d %v", len(ms), err)
	}
	// The glob matches "provider/id" or the id alone, as pi's does.
	for _, m := range ms {
		full := m.Provider + "/" + m.ID
		if !strings.HasPrefix(full, "anthropic/claude-opus-") && !strings.HasPrefix(m.ID, "anthropic/claude-opus-") {
			t.Errorf("scope matched %s", full)
		}
	}
	ms, err = reg.ResolveScope("*sonnet*")
	if err != nil {
		t.Fatal(err)
	}
	provs := map[string]bool{}
	for _, m := range ms {
		provs[m.Provider] = true
	}
	if !provs["anthropic"] || !provs["openrouter"] {
		t.Errorf("*sonnet* providers %v", provs)
	}
	if ms, err := reg.ResolveScope("gpt-4.1"); err != nil || len(ms) != 1 || ms[0].ID != "gpt-4.1" {
		t.Errorf("plain scope %v %v", ms, err)
	}
	if _, err := reg.ResolveScope("zzz*"); err == nil {
		t.Error("empty glob scope accepted")
	}
}

func TestThinkingLevels(t *testing.T) {
	reg := load(t, t.TempDir(), nil)
	opus47 := mustFind(t, reg, "anthropic", "claude-opus-4-7")
	opus46 := mustFind(t, reg, "anthropic", "claude-opus-4-6")
	gpt := mustFind(t, reg, "openai", "gpt-5.4")
	haiku := mustFind(t, reg, "anthropic", "claude-haiku-4-5")
	plain := mustFind(t, reg, "openai", "gpt-4.1")
	cases := []struct {
		m      *ai.Model
		levels string
		clamp  map[string]string
	}{
		{opus47, "off,minimal,low,medium,high,xhigh,max", map[string]string{"xhigh": "xhigh", "max": "max", "minimal": "minimal"}},
		{opus46, "off,minimal,low,medium,high,max", map[string]string{"xhigh": "max", "max": "max", "high": "high"}},
		{gpt, "off,minimal,low,medium,high,xhigh", map[string]string{"xhigh": "xhigh", "max": "xhigh"}},
		{haiku, "off,minimal,low,medium,high", map[string]string{"xhigh": "high", "max": "high", "low": "low"}},
		{plain, "off", map[string]string{"high": "off", "max": "off", "off": "off"}},
		{nil, "off", map[string]string{"medium": "off"}},
	}
	for _, c := range cases {
		name := "nil"
		if c.m != nil {
			name = c.m.ID
		}
		if got := strings.Join(LevelsFor(c.m), ","); got != c.levels {
			t.Errorf("%s: levels %s, want %s", name, got, c.levels)
		}
		for in, want := range c.clamp {
			if got := Clamp(c.m, in); got != want {
				t.Errorf("%s: Clamp(%s) = %s, want %s", name, in, got, want)
			}
		}
		if got := Clamp(c.m, "bogus"); got != "off" {
			t.Errorf("%s: Clamp(bogus) = %s", name, got)
		}
	}
	for _, l := range ThinkingLevels {
		if !ValidThinkingLevel(l) {
			t.Errorf("%s invalid", l)
		}
	}
	if ValidThinkingLevel("ultra") {
		t.Error("ultra valid")
	}
	// Every catalogue xhigh/max model reports those levels.
	for _, m := range reg.All() {
		for _, l := range m.ExtraThinkingLevels {
			if Clamp(m, l) != l {
				t.Errorf("%s/%s: %s not supported", m.Provider, m.ID, l)
			}
		}
	}
}

// Goroutines that read, resolve, add providers and set keys at once see
// consistent answers: the same cached model for the same local id, the
// same resolution, their own provider and key, and nothing lost at the end.
func TestRegistryConcurrentUse(t *testing.T) {
	reg := load(t, t.TempDir(), map[string]string{"OPENAI_API_KEY": "o"})
	gpt5, err := reg.Resolve("", "gpt-5")
	if err != nil {
		t.Fatal(err)
	}
	base := len(reg.Available())
	groq := 0
	for _, m := range reg.All() {
		if m.Provider == "groq" {
			groq++
		}
	}
	if groq == 0 {
		t.Fatal("no groq models in the catalogue")
	}
	const workers = 8
	var local sync.Map // ollama model id -> the first *ai.Model returned
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			extra := fmt.Sprintf("extra-%d", i)
			reg.Add(&ProviderEntry{Name: extra, NoKey: true, Models: []*ai.Model{{ID: "x", Provider: extra}}})
			reg.SetAPIKeyOverride("groq", "x")
			for j := 0; j < 50; j++ {
				id := fmt.Sprintf("m%d", j%5)
				m, ok := reg.Find("ollama", id)
				if !ok {
					t.Errorf("ollama/%s not found", id)
					return
				}
				if first, _ := local.LoadOrStore(id, m); first.(*ai.Model) != m {
					t.Errorf("ollama/%s: two different models", id)
				}
				if m, err := reg.Resolve("", "gpt-5"); m != gpt5 || err != nil {
					t.Errorf("Resolve(gpt-5) = %v, %v", m, err)
				}
				if k, ok := reg.Key("groq"); k != "x" || !ok {
					t.Errorf("groq key %q %v", k, ok)
				}
				if m, ok := reg.Find(extra, "x"); !ok || m.Provider != extra {
					t.Errorf("%s/x: %v %v", extra, m, ok)
				}
				if n := len(reg.Available()); n < base+groq+1 || n > base+groq+workers {
					t.Errorf("%d models available, want %d to %d", n, base+groq+1, base+groq+workers)
				}
			}
		}(i)
	}
	wg.Wait()
	if n := len(reg.Available()); n != base+groq+workers {
		t.Errorf("%d models available at the end, want %d", n, base+groq+workers)
	}
	extras := 0
	for _, p := range reg.Providers() {
		if strings.HasPrefix(p, "extra-") {
			extras++
		}
	}
	if extras != workers {
		t.Errorf("%d extra providers, want %d", extras, workers)
	}
}

// Built-in providers that models.json leaves alone build their models when
// first used; what is built is what building them all at once gives.
func TestLoadBuildsCatalogueOnDemand(t *testing.T) {
	p, _ := adapters(allAPIs...)
	reg, errs := Load(LoadOptions{Providers: p, Env: envOf(nil)})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	built := func(name string) bool {
		reg.mu.RLock()
		defer reg.mu.RUnlock()
		return reg.providers[name].Models != nil
	}
	for _, n := range reg.Providers() {
		if built(n) {
			t.Errorf("%s built at load", n)
		}
	}
	if _, err := reg.Resolve("", "openai/gpt-5"); err != nil {
		t.Fatal(err)
	}
	mustFind(t, reg, "anthropic", "claude-opus-4-7")
	for _, n := range reg.Providers() {
		if want := n == "openai" || n == "anthropic"; built(n) != want {
			t.Errorf("%s built: %v", n, built(n))
		}
	}
	var want []*ai.Model
	cat, _ := Catalogue()
	for i := range cat {
		for j := range cat[i].Models {
			want = append(want, cat[i].Models[j].model(&cat[i]))
		}
	}
	sortModels(want)
	got := reg.All()
	if len(got) != len(want) {
		t.Fatalf("%d models, want %d", len(got), len(want))
	}
	for i := range got {
		g, _ := json.Marshal(got[i])
		w, _ := json.Marshal(want[i])
		if string(g) != string(w) {
			t.Errorf("model %d:\n got %s\nwant %s", i, g, w)
		}
	}
}

// A built-in provider with models of an API that has no adapter keeps the
// others, and says so at load, built lazily or not.
func TestLoadLazyDropsModelsWithoutAdapter(t *testing.T) {
	saved := catalogueData
	t.Cleanup(func() { catalogueData = saved })
	catalogueData = []CatalogueProvider{{
		Name: "mixed", API: APIOpenAICompletions, BaseURL: "https://x.example/v1", Env: []string{"MIXED_KEY"},
		Models: []CatalogueModel{{ID: "a", Input: []string{"text"}}, {ID: "b", API: APIOpenAIResponses}, {ID: "c"}},
	}}
	p, _ := adapters(APIOpenAICompletions)
	for _, dir := range []string{"", t.TempDir()} {
		if dir != "" {
			writeFile(t, dir, "models.json", `{"providers":{"mixed":{"headers":{"X":"1"}}}}`)
		}
		reg, errs := Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(nil)})
		if text := joinErrs(errs); text != "provider \"mixed\": no adapter for API \"openai-responses\"; skipped 1 model(s)\n" {
			t.Errorf("models.json %q: errors %q", dir, text)
		}
		var ids []string
		for _, m := range reg.All() {
			ids = append(ids, m.ID)
		}
		if strings.Join(ids, ",") != "a,c" {
			t.Errorf("models.json %q: models %v", dir, ids)
		}
	}
}

// auth.json open to other users is loaded, with a warning naming the file
// and the fix, once per process.
func TestAuthModeWarning(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "auth.json")
	writeFile(t, dir, "auth.json", `{"openai": {"type": "api_key", "key": "sk-open"}}`)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	p, _ := adapters(allAPIs...)
	reg, errs := Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(nil)})
	if k, _ := reg.Key("openai"); k != "sk-open" {
		t.Fatalf("the key was not loaded: %q", k)
	}
	var warned []string
	for _, e := range errs {
		var w *AuthModeWarning
		if errors.As(e, &w) {
			warned = append(warned, e.Error())
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], path) || !strings.Contains(warned[0], "chmod 600 "+path) || !strings.Contains(warned[0], "0644") {
		t.Fatalf("warnings %q (all: %v)", warned, errs)
	}
	if _, errs := Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(nil)}); len(errs) != 0 {
		t.Fatalf("warned again: %v", errs)
	}

	private := t.TempDir()
	writeFile(t, private, "auth.json", `{"openai": {"type": "api_key", "key": "sk-private"}}`)
	if _, errs := Load(LoadOptions{AgentDir: private, Providers: p, Env: envOf(nil)}); len(errs) != 0 {
		t.Fatalf("a 0600 auth.json warned: %v", errs)
	}
}
