package cli

import (
	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/ai/anthropic"
	"github.com/pisces-agent/pisces/internal/ai/google"
	"github.com/pisces-agent/pisces/internal/ai/openai"
)

// The wire-API adapters are stateless: one of each serves every model.
var (
	anthropicAdapter   = anthropic.New()
	completionsAdapter = openai.NewCompletions(nil)
	responsesAdapter   = openai.NewResponses(nil)
	codexAdapter       = openai.NewCodexResponses(nil)
	googleAdapter      = google.New()
)

// adapterFor returns the adapter of a wire API (nil when Pisces has none).
func adapterFor(api string) ai.Provider {
	switch api {
	case anthropic.API:
		return anthropicAdapter
	case openai.APICompletions:
		return completionsAdapter
	case openai.APIResponses:
		return responsesAdapter
	case openai.APICodexResponses:
		return codexAdapter
	case google.API:
		return googleAdapter
	}
	return nil
}

// defaultProviders is the order in which a provider's default model is
// chosen when neither flags nor settings name one: the first whose key
// resolves.
var defaultProviders = []string{"anthropic", "openai", "google", "openrouter", "groq", "cerebras", "xai", "deepseek", "mistral", "together", "fireworks"}
