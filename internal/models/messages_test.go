package models

import (
	"path/filepath"
	"testing"
)

func TestMissingKeyErrorNamesTheNextStep(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := filepath.Join(home, ".pisces", "agent")
	reg := load(t, dir, nil)
	for provider, want := range map[string]string{
		"openai":       "No API key for openai: set OPENAI_API_KEY or add it to ~/.pisces/agent/auth.json or log in with `pisces auth login openai`",
		"anthropic":    "No API key for anthropic: set ANTHROPIC_API_KEY or add it to ~/.pisces/agent/auth.json or log in with `pisces auth login anthropic`",
		"openai-codex": "No API key for openai-codex: add it to ~/.pisces/agent/auth.json or log in with `pisces auth login openai-codex`",
	} {
		if got := reg.MissingKeyError(provider).Error(); got != want {
			t.Errorf("%s:\n got %q\nwant %q", provider, got, want)
		}
	}
	if v := reg.KeyVariable("ollama"); v != "" {
		t.Errorf("a keyless local server names %q", v)
	}

	// A models.json provider reads no variable: its apiKey is the way.
	other := t.TempDir()
	writeFile(t, other, "models.json", `{"providers": {"corp": {"baseUrl": "https://llm.corp.example/v1", "api": "openai-completions", "models": [{"id": "m"}]}}}`)
	reg = load(t, other, nil)
	want := "No API key for corp: set apiKey for it in models.json or add it to " + filepath.Join(other, "auth.json")
	if got := reg.MissingKeyError("corp").Error(); got != want {
		t.Errorf("custom provider:\n got %q\nwant %q", got, want)
	}

	// Without an agent dir there is no auth.json to name.
	if got := NewRegistry().MissingKeyError("x").Error(); got != "No API key for x: set apiKey for it in models.json" {
		t.Errorf("no agent dir: %q", got)
	}
}

func TestHomeRelative(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for in, want := range map[string]string{
		filepath.Join(home, "a", "auth.json"): "~/a/auth.json",
		home:                                  "~",
		home + "x/auth.json":                  home + "x/auth.json", // a sibling, not under home
		"/elsewhere/auth.json":                "/elsewhere/auth.json",
		"":                                    "",
	} {
		if got := HomeRelative(in); got != want {
			t.Errorf("HomeRelative(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAuthFileErrorsNameLineAndColumn(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "auth.json", "{\n  \"openai\": {\"type\": \"api_key\", \"key\": \"sk-ok\"},\n  \"groq\": {\"type\": \"api_key\", \"key\": 42}\n}\n")
	p, _ := adapters(allAPIs...)
	reg, errs := Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(nil)})
	want := filepath.Join(dir, "auth.json") + `: line 3, column 38: "groq": "key" must be a string, not a number`
	if len(errs) != 1 || errs[0].Error() != want {
		t.Fatalf("errors %v\nwant %s", errs, want)
	}
	if k, ok := reg.Key("openai"); !ok || k != "sk-ok" {
		t.Errorf("the good entry was not kept: %q %v", k, ok)
	}

	writeFile(t, dir, "auth.json", "{\n  \"openai\": {\"type\": \"api_key\" \"key\": \"sk\"}\n}\n")
	_, errs = Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(nil)})
	want = filepath.Join(dir, "auth.json") + `: line 2, column 32: expected ',' or '}' after a value, found '"' (a missing comma?)`
	if len(errs) != 1 || errs[0].Error() != want {
		t.Fatalf("errors %v\nwant %s", errs, want)
	}
}
