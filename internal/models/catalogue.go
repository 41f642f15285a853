package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
)

// Wire APIs Pisces knows by name. models.json may name others; a provider
// whose API has no adapter is skipped when the registry is loaded.
const (
	APIAnthropicMessages  = "anthropic-messages"
	APIOpenAICompletions  = "openai-completions"
	APIOpenAIResponses    = "openai-responses"
	APIGoogleGenerativeAI = "google-generative-ai"
	APICodexResponses     = "openai-codex-responses"
)

// Defaults of a model declared with only an id (pi's models.json defaults).
const (
	DefaultContextWindow = 128000
	DefaultMaxTokens     = 16384
)

// CatalogueProvider is one built-in provider of the embedded catalogue.
type CatalogueProvider struct {
	Name    string   `json:"name"`
	API     string   `json:"api"`
	BaseURL string   `json:"baseUrl"`
	Env     []string `json:"env,omitempty"`   // key variables, first set wins
	Local   bool     `json:"local,omitempty"` // keyless local server that accepts any model id
	// Login marks a provider whose key comes from a subscription login
	// (pisces auth login); it may have no key variables.
	Login  bool             `json:"login,omitempty"`
	Compat json.RawMessage  `json:"compat,omitempty"`
	Models []CatalogueModel `json:"models"`
}

// CatalogueModel is one built-in model. API, BaseURL and Compat default to
// the provider's.
type CatalogueModel struct {
	ID                  string          `json:"id"`
	Name                string          `json:"name"`
	API                 string          `json:"api,omitempty"`
	Reasoning           bool            `json:"reasoning"`
	Input               []string        `json:"input"`
	ContextWindow       int             `json:"contextWindow"`
	MaxTokens           int             `json:"maxTokens"`
	Cost                ai.ModelCost    `json:"cost"`
	ExtraThinkingLevels []string        `json:"extraThinkingLevels,omitempty"`
	Compat              json.RawMessage `json:"compat,omitempty"`
}

type catalogueFile struct {
	Comment   string              `json:"comment"`
	Providers []CatalogueProvider `json:"providers"`
}

// Catalogue returns the built-in catalogue: catalogue.json as
// catalogue_gen.go holds it, static data that needs no parsing at start-up
// (TestCatalogueGenerated checks it against parseCatalogue, which validates,
// of catalogue.json). The result is shared: callers must not modify it.
func Catalogue() ([]CatalogueProvider, error) {
	return catalogueData, nil
}

func parseCatalogue(data []byte) ([]CatalogueProvider, error) {
	var f catalogueFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("catalogue.json: %s", jsonx.PlainError(data, err))
	}
	var out []CatalogueProvider
	seen := map[string]bool{}
	for _, cp := range f.Providers {
		if err := validateCatalogueProvider(&cp); err != nil {
			return nil, fmt.Errorf("catalogue.json: provider %q: %v", cp.Name, err)
		}
		if seen[cp.Name] {
			return nil, fmt.Errorf("catalogue.json: provider %q listed twice", cp.Name)
		}
		seen[cp.Name] = true
		out = append(out, cp)
	}
	return out, nil
}

func validateCatalogueProvider(p *CatalogueProvider) error {
	if p.Name == "" || strings.ContainsAny(p.Name, "/ \t") {
		return fmt.Errorf("bad provider name")
	}
	if p.API == "" {
		return fmt.Errorf("missing api")
	}
	if !strings.HasPrefix(p.BaseURL, "http://") && !strings.HasPrefix(p.BaseURL, "https://") {
		return fmt.Errorf("bad baseUrl %q", p.BaseURL)
	}
	if !p.Local && !p.Login && len(p.Env) == 0 {
		return fmt.Errorf("a remote provider needs key variables")
	}
	if len(p.Compat) > 0 && !isJSONObject(p.Compat) {
		return fmt.Errorf("compat is not an object")
	}
	ids := map[string]bool{}
	for i := range p.Models {
		m := &p.Models[i]
		if err := validateCatalogueModel(m); err != nil {
			return fmt.Errorf("model %q: %v", m.ID, err)
		}
		if ids[m.ID] {
			return fmt.Errorf("model %q listed twice", m.ID)
		}
		ids[m.ID] = true
	}
	return nil
}

func validateCatalogueModel(m *CatalogueModel) error {
	if m.ID == "" {
		return fmt.Errorf("missing id")
	}
	if m.Name == "" {
		return fmt.Errorf("missing name")
	}
	if m.ContextWindow <= 0 || m.MaxTokens <= 0 {
		return fmt.Errorf("contextWindow and maxTokens must be positive")
	}
	if m.MaxTokens > m.ContextWindow {
		return fmt.Errorf("maxTokens %d exceeds contextWindow %d", m.MaxTokens, m.ContextWindow)
	}
	if err := validateInput(m.Input); err != nil {
		return err
	}
	c := m.Cost
	if c.Input < 0 || c.Output < 0 || c.CacheRead < 0 || c.CacheWrite < 0 {
		return fmt.Errorf("negative cost")
	}
	if err := validateExtraLevels(m.ExtraThinkingLevels, m.Reasoning); err != nil {
		return err
	}
	if len(m.Compat) > 0 && !isJSONObject(m.Compat) {
		return fmt.Errorf("compat is not an object")
	}
	return nil
}

func validateInput(in []string) error {
	if len(in) == 0 {
		return fmt.Errorf("missing input kinds")
	}
	hasText := false
	for _, k := range in {
		switch k {
		case "text":
			hasText = true
		case "image":
		default:
			return fmt.Errorf("unknown input kind %q", k)
		}
	}
	if !hasText {
		return fmt.Errorf("input must include text")
	}
	return nil
}

func validateExtraLevels(levels []string, reasoning bool) error {
	for _, l := range levels {
		if l != "xhigh" && l != "max" {
			return fmt.Errorf("extra thinking level %q is not xhigh or max", l)
		}
		if !reasoning {
			return fmt.Errorf("extra thinking levels on a model without reasoning")
		}
	}
	return nil
}

func isJSONObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// mergeCompat merges JSON objects left to right (later keys win). Empty or
// non-object layers are ignored. It returns nil when nothing is set.
func mergeCompat(layers ...json.RawMessage) json.RawMessage {
	var merged map[string]json.RawMessage
	n := 0
	for _, l := range layers {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(l, &m) != nil || m == nil {
			continue
		}
		n++
		if merged == nil {
			merged = map[string]json.RawMessage{}
		}
		for k, v := range m {
			merged[k] = v
		}
	}
	if n == 0 || len(merged) == 0 {
		return nil
	}
	out, err := json.Marshal(merged) // keys sorted: deterministic
	if err != nil {
		return nil
	}
	return out
}

// model builds an ai.Model from a catalogue entry of provider p.
func (m *CatalogueModel) model(p *CatalogueProvider) *ai.Model {
	api := m.API
	if api == "" {
		api = p.API
	}
	return &ai.Model{
		ID:                  m.ID,
		Name:                m.Name,
		API:                 api,
		Provider:            p.Name,
		BaseURL:             p.BaseURL,
		Reasoning:           m.Reasoning,
		Input:               append([]string(nil), m.Input...),
		Cost:                m.Cost,
		ContextWindow:       m.ContextWindow,
		MaxTokens:           m.MaxTokens,
		Compat:              mergeCompat(p.Compat, m.Compat),
		ExtraThinkingLevels: append([]string(nil), m.ExtraThinkingLevels...),
	}
}
