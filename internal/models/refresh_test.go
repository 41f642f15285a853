package models

import (
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
)

// Refresh takes a registry loaded again: a models.json provider added
// since appears, a provider added after Load (the scripted one) stays, and
// so do the --api-key overrides.
func TestRefresh(t *testing.T) {
	dir := t.TempDir()
	reg := load(t, dir, nil)
	reg.Add(&ProviderEntry{Name: "local-test", Models: []*ai.Model{{ID: "m", Provider: "local-test"}}, NoKey: true})
	reg.SetAPIKeyOverride("openai", "sk-flag")
	if _, ok := reg.Key("anthropic"); ok {
		t.Fatal("anthropic has a key before models.json gives one")
	}
	writeFile(t, dir, "models.json", `{"providers": {"anthropic": {"apiKey": "sk-models-json"}}}`)
	p, _ := adapters(allAPIs...)
	next, errs := Load(LoadOptions{AgentDir: dir, Providers: p, Env: envOf(nil), Auth: reg.Auth()})
	for _, e := range errs {
		t.Errorf("load: %v", e)
	}
	reg.Refresh(next)
	if k, ok := reg.Key("anthropic"); !ok || k != "sk-models-json" {
		t.Errorf("anthropic's key after Refresh %q %v", k, ok)
	}
	if _, ok := reg.Find("local-test", "m"); !ok {
		t.Error("the provider added after Load was dropped")
	}
	if k, _ := reg.Key("openai"); k != "sk-flag" {
		t.Errorf("the --api-key override was dropped: %q", k)
	}
}
