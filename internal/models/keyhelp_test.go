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
		"openai":    "No API key for openai: set OPENAI_API_KEY or add it to ~/.pisces/agent/auth.json",
		"anthropic": "No API key for anthropic: set ANTHROPIC_API_KEY or add it to ~/.pisces/agent/auth.json",
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
