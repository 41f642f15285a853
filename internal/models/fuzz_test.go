package models

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Any models.json and auth.json: Load does not panic, returns a usable
// registry (every model it lists is complete enough to be resolved and
// encoded), and keys resolve without a panic. Inputs that could run a
// command ("!command" values) are not tried.
func FuzzModelsAndAuth(f *testing.F) {
	f.Add([]byte(`{"providers": {"my": {"baseUrl": "http://10.0.0.5:8000/v1", "api": "openai-completions", "apiKey": "MY_KEY_VAR",
		"headers": {"X-A": "B"}, "models": [{"id": "m", "contextWindow": 128000, "reasoning": true, "input": ["text", "image"],
		"cost": {"input": 1, "output": 2}, "compat": {"supportsStore": false}}]},
		"openai": {"apiKey": "k", "modelOverrides": {"gpt-5": {"contextWindow": 1}}}}}`),
		[]byte(`{"anthropic": {"type": "api_key", "key": "sk-ant"}, "google": {"type": "oauth", "access": "a", "expires": 1}}`))
	f.Add([]byte(`{"providers": {"ollama": {"models": [{"id": "qwen3"}]}, "x": {"api": "nope", "models": [{}]}}}`), []byte(`{"groq": {"key": ["bad"]}}`))
	f.Add([]byte(`{"providers": {"corp": {"baseUrl": "https://llm.corp.example/v1", "api": "anthropic-messages", "models": [{"id": "big", "contextWindow": "128k"}]}}}`), []byte(`[]`))
	f.Add([]byte("// c\n{}"), []byte(""))
	dir := f.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "pisces-fuzz"); err == nil {
		dir = d
		f.Cleanup(func() { os.RemoveAll(d) })
	}
	noEnv := func(string) string { return "" }
	f.Fuzz(func(t *testing.T, modelsJSON, authJSON []byte) {
		for _, b := range [][]byte{modelsJSON, authJSON} {
			if bytes.Contains(b, []byte("!")) || bytes.Contains(bytes.ToLower(b), []byte(`\u0021`)) {
				return // a "!command" value would run
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "models.json"), modelsJSON, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "auth.json"), authJSON, 0o600); err != nil {
			t.Fatal(err)
		}
		reg, _ := Load(LoadOptions{AgentDir: dir, Env: noEnv})
		if reg == nil {
			t.Fatal("no registry")
		}
		for _, m := range reg.All() {
			if m == nil || m.Provider == "" || m.ID == "" {
				t.Fatalf("incomplete model %+v", m)
			}
			if _, err := json.Marshal(m); err != nil {
				t.Fatalf("model %s/%s does not encode: %v", m.Provider, m.ID, err)
			}
			if got, err := reg.Resolve(m.Provider, m.ID); err != nil || got == nil {
				t.Fatalf("%s/%s is listed but does not resolve: %v", m.Provider, m.ID, err)
			}
		}
		for _, p := range reg.Providers() {
			if k, ok := reg.Key(p); ok && strings.HasPrefix(k, "!") {
				t.Fatalf("%s: unresolved command %q", p, k)
			}
		}
		reg.Available()
		reg.ResolveScope("*")
	})
}
