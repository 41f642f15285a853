package openai

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
)

// compatJSON is a model's "compat" object of models.json; unset members
// keep the value detected from the provider and base URL.
type compatJSON struct {
	SupportsStore                    *bool             `json:"supportsStore"`
	SupportsDeveloperRole            *bool             `json:"supportsDeveloperRole"`
	SupportsReasoningEffort          *bool             `json:"supportsReasoningEffort"`
	ReasoningEffortMap               map[string]string `json:"reasoningEffortMap"`
	SupportsUsageInStreaming         *bool             `json:"supportsUsageInStreaming"`
	MaxTokensField                   string            `json:"maxTokensField"`
	RequiresToolResultName           *bool             `json:"requiresToolResultName"`
	RequiresAssistantAfterToolResult *bool             `json:"requiresAssistantAfterToolResult"`
	RequiresThinkingAsText           *bool             `json:"requiresThinkingAsText"`
	RequiresMistralToolIDs           *bool             `json:"requiresMistralToolIds"`
	ThinkingFormat                   string            `json:"thinkingFormat"`
	SupportsStrictMode               *bool             `json:"supportsStrictMode"`
}

// compat is the resolved set of flags for one request.
type compat struct {
	isOpenAI                         bool // api.openai.com itself
	supportsStore                    bool
	supportsDeveloperRole            bool
	supportsReasoningEffort          bool
	reasoningEffortMap               map[string]string
	supportsUsageInStreaming         bool
	maxTokensField                   string // max_completion_tokens | max_tokens
	requiresToolResultName           bool
	requiresAssistantAfterToolResult bool
	requiresThinkingAsText           bool
	requiresMistralToolIDs           bool
	thinkingFormat                   string // reasoning_effort | zai | qwen | qwen-chat-template
	supportsStrictMode               bool
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// detectCompat guesses the flags from the provider name and base URL, as pi
// does; OpenAI's own API gets the OpenAI-only features (store, developer
// role, max_completion_tokens), other servers the widely accepted forms.
func detectCompat(m *ai.Model) compat {
	base := strings.ToLower(baseURL(m))
	host := hostOf(base)
	p := m.Provider
	has := func(s string) bool { return strings.Contains(base, s) }

	isOpenAI := host == "api.openai.com"
	isZai := p == "zai" || has("api.z.ai") || has("open.bigmodel.cn")
	isXAI := p == "xai" || has("api.x.ai")
	isMistral := p == "mistral" || has("mistral.ai")

	c := compat{
		isOpenAI:                 isOpenAI,
		supportsStore:            isOpenAI,
		supportsDeveloperRole:    isOpenAI,
		supportsReasoningEffort:  !isXAI && !isZai,
		supportsUsageInStreaming: true,
		maxTokensField:           "max_tokens",
		requiresToolResultName:   isMistral,
		requiresThinkingAsText:   isMistral,
		requiresMistralToolIDs:   isMistral,
		thinkingFormat:           "reasoning_effort",
		supportsStrictMode:       true,
	}
	if isOpenAI {
		c.maxTokensField = "max_completion_tokens"
	}
	if isZai {
		c.thinkingFormat = "zai"
	}
	return c
}

// resolveCompat applies the model's compat object over the detected flags.
func resolveCompat(m *ai.Model) compat {
	c := detectCompat(m)
	if len(m.Compat) == 0 {
		return c
	}
	var j compatJSON
	if json.Unmarshal(m.Compat, &j) != nil {
		return c
	}
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.supportsStore, j.SupportsStore)
	set(&c.supportsDeveloperRole, j.SupportsDeveloperRole)
	set(&c.supportsReasoningEffort, j.SupportsReasoningEffort)
	set(&c.supportsUsageInStreaming, j.SupportsUsageInStreaming)
	set(&c.requiresToolResultName, j.RequiresToolResultName)
	set(&c.requiresAssistantAfterToolResult, j.RequiresAssistantAfterToolResult)
	set(&c.requiresThinkingAsText, j.RequiresThinkingAsText)
	set(&c.requiresMistralToolIDs, j.RequiresMistralToolIDs)
	set(&c.supportsStrictMode, j.SupportsStrictMode)
	if j.ReasoningEffortMap != nil {
		c.reasoningEffortMap = j.ReasoningEffortMap
	}
	if j.MaxTokensField == "max_tokens" || j.MaxTokensField == "max_completion_tokens" {
		c.maxTokensField = j.MaxTokensField
	}
	switch j.ThinkingFormat {
	case "reasoning_effort", "openai":
		c.thinkingFormat = "reasoning_effort"
	case "zai", "qwen", "qwen-chat-template":
		c.thinkingFormat = j.ThinkingFormat
	}
	return c
}

// effort maps a thinking level through reasoningEffortMap.
func (c compat) effort(level string) string {
	if v, ok := c.reasoningEffortMap[level]; ok && v != "" {
		return v
	}
	return level
}
