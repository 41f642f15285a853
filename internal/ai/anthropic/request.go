package anthropic

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/lazy"
)

// defaultBudget is the default token budget of a budget-based thinking
// level (medium's for any other level).
func defaultBudget(level string) int {
	switch level {
	case "minimal":
		return 1024
	case "low":
		return 2048
	case "high":
		return 16384
	}
	return 8192
}

const (
	defaultMaxTokensCap = 32000
	minOutputTokens     = 1024
	minThinkingBudget   = 1024 // the API's smallest budget_tokens
)

// buildParams maps a request onto the Messages API body, and returns the
// beta features it needs.
func buildParams(req *ai.Request, oauth bool) (sdk.MessageNewParams, []string, error) {
	if req.Model == nil {
		return sdk.MessageNewParams{}, nil, errors.New("anthropic: request has no model")
	}
	m := req.Model
	p := sdk.MessageNewParams{
		Model:    sdk.Model(m.ID),
		Messages: convertMessages(m, req.Messages),
	}

	var system []sdk.TextBlockParam
	if oauth {
		system = append(system, sdk.TextBlockParam{Text: oauthIdentity, CacheControl: sdk.NewCacheControlEphemeralParam()})
	}
	if req.SystemPrompt != "" {
		system = append(system, sdk.TextBlockParam{Text: req.SystemPrompt, CacheControl: sdk.NewCacheControlEphemeralParam()})
	}
	p.System = system

	for _, t := range req.Tools {
		p.Tools = append(p.Tools, convertTool(t))
	}
	if oauth {
		claudeCodeNames(&p)
	}

	var betas []string
	plan := planThinking(req)
	p.MaxTokens = int64(plan.maxTokens)
	switch {
	case plan.adaptive:
		p.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{
			Display: sdk.ThinkingConfigAdaptiveDisplaySummarized,
		}}
		p.OutputConfig = sdk.OutputConfigParam{Effort: sdk.OutputConfigEffort(plan.effort)}
	case plan.budget > 0:
		p.Thinking = sdk.ThinkingConfigParamUnion{OfEnabled: &sdk.ThinkingConfigEnabledParam{BudgetTokens: int64(plan.budget)}}
		betas = append(betas, betaInterleavedThinking)
	}
	return p, betas, nil
}

// thinkingPlan is how a request's thinking level is sent.
type thinkingPlan struct {
	maxTokens int
	adaptive  bool   // thinking {type: adaptive} with output_config.effort
	effort    string // adaptive only
	budget    int    // budget thinking: budget_tokens (0: thinking off)
}

// planThinking applies pi's thinking mapping for anthropic-messages: adaptive
// thinking with an effort for Claude 4.6 and later, token budgets for older
// models (raising max_tokens by the budget within the model's limit).
func planThinking(req *ai.Request) thinkingPlan {
	m := req.Model
	modelMax := m.MaxTokens
	if modelMax <= 0 {
		modelMax = defaultMaxTokensCap
	}
	base := req.MaxTokens
	if base <= 0 {
		base = min(modelMax, defaultMaxTokensCap)
	}
	plan := thinkingPlan{maxTokens: base}
	level := req.ThinkingLevel
	if !m.Reasoning || level == "" || level == "off" {
		return plan
	}
	if supportsAdaptive(m.ID) {
		plan.adaptive = true
		plan.effort = effortFor(m.ID, level)
		return plan
	}
	// Budget levels stop at high.
	if level == "xhigh" || level == "max" {
		level = "high"
	}
	budget := defaultBudget(level)
	if v, ok := req.ThinkingBudgets[level]; ok && v > 0 {
		budget = v
	}
	maxTokens := min(base+budget, modelMax)
	if maxTokens <= budget {
		budget = max(0, maxTokens-minOutputTokens)
	}
	plan.maxTokens = maxTokens
	if budget >= minThinkingBudget {
		plan.budget = budget
	}
	return plan
}

// effortFor maps a pi thinking level onto output_config.effort.
func effortFor(modelID, level string) string {
	switch level {
	case "minimal", "low":
		return "low"
	case "medium":
		return "medium"
	case "xhigh":
		if f, _, _ := claudeVersion(modelID); f == "opus" || f == "mythos" {
			return "max"
		}
		return "high"
	case "max":
		return "max"
	default:
		return "high"
	}
}

var versionToken = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^\d{1,2}$`) }}

// claudeVersion finds the family (opus, sonnet, haiku, mythos, fable) and
// the version of a Claude model id in its usual spellings:
// claude-opus-4-6, claude-sonnet-4-5-20250929, claude-3-7-sonnet-latest,
// anthropic/claude-opus-4.6, claude-opus-5.
func claudeVersion(id string) (family string, major, minor int) {
	id = strings.ToLower(id)
	if i := strings.LastIndex(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	var nums []int
	for _, tok := range strings.FieldsFunc(id, func(r rune) bool {
		return r == '-' || r == '.' || r == '_' || r == ':' || r == '@'
	}) {
		switch tok {
		case "opus", "sonnet", "haiku", "mythos", "fable":
			if family == "" {
				family = tok
			}
		default:
			if versionToken.Get().MatchString(tok) && len(nums) < 2 {
				n, _ := strconv.Atoi(tok)
				nums = append(nums, n)
			}
		}
	}
	if len(nums) > 0 {
		major = nums[0]
	}
	if len(nums) > 1 {
		minor = nums[1]
	}
	return family, major, minor
}

// supportsAdaptive reports whether a model takes adaptive thinking (Claude
// 4.6 and later; Mythos and Fable).
func supportsAdaptive(id string) bool {
	f, major, minor := claudeVersion(id)
	switch f {
	case "mythos", "fable":
		return true
	case "opus", "sonnet", "haiku":
		return major > 4 || major == 4 && minor >= 6
	}
	return false
}

// convertTool declares a tool with its JSON schema: as the tool gives it
// (an MCP tool's as its server wrote it, key order and "$schema" kept,
// written as JSON.stringify would) when it is an object schema; anything
// else is made one.
func convertTool(t ai.ToolSpec) sdk.ToolUnionParam {
	var schema map[string]json.RawMessage
	_ = json.Unmarshal(t.Parameters, &schema)
	if string(schema["type"]) == `"object"` {
		if raw, err := jsonx.Restringify(t.Parameters); err == nil {
			tool := &sdk.ToolParam{Name: t.Name, InputSchema: param.Override[sdk.ToolInputSchemaParam](json.RawMessage(raw))}
			if t.Description != "" {
				tool.Description = sdk.String(t.Description)
			}
			return sdk.ToolUnionParam{OfTool: tool}
		}
	}
	in := sdk.ToolInputSchemaParam{Properties: json.RawMessage("{}")}
	for k, v := range schema {
		switch k {
		case "type", "$schema":
		case "properties":
			in.Properties = v
		case "required":
			var req []string
			if json.Unmarshal(v, &req) == nil {
				in.Required = req
			}
		default:
			if in.ExtraFields == nil {
				in.ExtraFields = map[string]any{}
			}
			in.ExtraFields[k] = v
		}
	}
	tool := &sdk.ToolParam{Name: t.Name, InputSchema: in}
	if t.Description != "" {
		tool.Description = sdk.String(t.Description)
	}
	return sdk.ToolUnionParam{OfTool: tool}
}

// toolID makes a tool call id acceptable to Anthropic (^[a-zA-Z0-9_-]{1,64}$);
// ids from other APIs may hold other characters.
func toolID(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	if len(b) == 0 {
		return "toolu_unknown"
	}
	return string(b)
}

func supportsImages(m *ai.Model) bool {
	return len(m.Input) == 0 || slices.Contains(m.Input, "image")
}

// convertMessages maps the conversation onto Anthropic's user/assistant
// turns. As pi does, failed or aborted assistant messages are left out, a
// tool call that never got a result gets an error result ("No result
// provided"), consecutive tool results become one user turn, thinking from
// another model is sent as text, and the last user turn is marked for
// prompt caching. Tool results that answer no tool call of the preceding
// assistant turn are dropped.
func convertMessages(model *ai.Model, msgs []ai.Message) []sdk.MessageParam {
	var out []sdk.MessageParam
	var results []sdk.ContentBlockParamUnion // pending tool_result blocks
	var pending []string                     // tool calls without a result yet
	answered := map[string]bool{}
	images := supportsImages(model)

	flushResults := func() {
		if len(results) > 0 {
			out = append(out, sdk.MessageParam{Role: sdk.MessageParamRoleUser, Content: results})
			results = nil
		}
	}
	// answerMissing adds error results for the tool calls left unanswered
	// before the conversation moves on.
	answerMissing := func() {
		for _, id := range pending {
			if !answered[id] {
				results = append(results, sdk.ContentBlockParamUnion{OfToolResult: &sdk.ToolResultBlockParam{
					ToolUseID: id,
					IsError:   sdk.Bool(true),
					Content:   []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: "No result provided"}}},
				}})
			}
		}
		pending = nil
	}

	for _, msg := range msgs {
		switch m := msg.(type) {
		case *ai.UserMessage:
			answerMissing()
			flushResults()
			blocks := userBlocks(m.Content.AsBlocks(), images)
			if len(blocks) > 0 {
				out = append(out, sdk.MessageParam{Role: sdk.MessageParamRoleUser, Content: blocks})
			}
		case *ai.AssistantMessage:
			if m.StopReason == ai.StopError || m.StopReason == ai.StopAborted {
				continue
			}
			answerMissing()
			flushResults()
			blocks, calls := assistantBlocks(model, m)
			if len(blocks) > 0 {
				out = append(out, sdk.MessageParam{Role: sdk.MessageParamRoleAssistant, Content: blocks})
				pending = calls
				answered = map[string]bool{}
			}
		case *ai.ToolResultMessage:
			// A result must answer a tool call of the assistant turn just
			// before; any other (its call was dropped, or answered
			// already) would be rejected by the API.
			id := toolID(m.ToolCallID)
			if answered[id] || !slices.Contains(pending, id) {
				continue
			}
			answered[id] = true
			results = append(results, toolResultBlock(id, m, images))
		}
	}
	flushResults()

	// Prompt caching: mark the end of the last user turn.
	if n := len(out); n > 0 && out[n-1].Role == sdk.MessageParamRoleUser {
		blocks := out[n-1].Content
		if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
		}
	}
	return out
}

func imageBlock(c ai.Content) *sdk.ImageBlockParam {
	if c.URL != "" {
		return &sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfURL: &sdk.URLImageSourceParam{URL: c.URL}}}
	}
	return &sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
		Data:      c.Data,
		MediaType: sdk.Base64ImageSourceMediaType(c.MimeType),
	}}}
}

func userBlocks(content []ai.Content, images bool) []sdk.ContentBlockParamUnion {
	var out []sdk.ContentBlockParamUnion
	for _, c := range content {
		switch c.Type {
		case ai.ContentText:
			if strings.TrimSpace(c.Text) != "" {
				out = append(out, sdk.ContentBlockParamUnion{OfText: &sdk.TextBlockParam{Text: c.Text}})
			}
		case ai.ContentImage:
			if images {
				out = append(out, sdk.ContentBlockParamUnion{OfImage: imageBlock(c)})
			}
		}
	}
	return out
}

func toolResultBlock(id string, m *ai.ToolResultMessage, images bool) sdk.ContentBlockParamUnion {
	var content []sdk.ToolResultBlockParamContentUnion
	hasText := false
	for _, c := range m.Content {
		switch c.Type {
		case ai.ContentText:
			content = append(content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: c.Text}})
			hasText = true
		case ai.ContentImage:
			if images {
				content = append(content, sdk.ToolResultBlockParamContentUnion{OfImage: imageBlock(c)})
			}
		}
	}
	if len(content) > 0 && !hasText {
		content = append([]sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: "(see attached image)"}}}, content...)
	}
	r := &sdk.ToolResultBlockParam{ToolUseID: id, Content: content}
	if m.IsError {
		r.IsError = sdk.Bool(true)
	}
	return sdk.ContentBlockParamUnion{OfToolResult: r}
}

// assistantBlocks converts an assistant message and returns the ids of its
// tool calls.
func assistantBlocks(model *ai.Model, m *ai.AssistantMessage) ([]sdk.ContentBlockParamUnion, []string) {
	same := m.Provider == model.Provider && m.API == model.API && m.Model == model.ID
	var out []sdk.ContentBlockParamUnion
	var calls []string
	text := func(s string) {
		if strings.TrimSpace(s) != "" {
			out = append(out, sdk.ContentBlockParamUnion{OfText: &sdk.TextBlockParam{Text: s}})
		}
	}
	for _, c := range m.Content {
		switch c.Type {
		case ai.ContentText:
			text(c.Text)
		case ai.ContentThinking:
			switch {
			case c.Redacted:
				// The encrypted reasoning only means something to the
				// model that wrote it.
				if same && c.ThinkingSignature != "" {
					out = append(out, sdk.ContentBlockParamUnion{OfRedactedThinking: &sdk.RedactedThinkingBlockParam{Data: c.ThinkingSignature}})
				}
			case same && c.ThinkingSignature != "":
				out = append(out, sdk.ContentBlockParamUnion{OfThinking: &sdk.ThinkingBlockParam{
					Thinking:  c.Thinking,
					Signature: c.ThinkingSignature,
				}})
			default:
				text(c.Thinking)
			}
		case ai.ContentToolCall:
			id := toolID(c.ID)
			args := c.Arguments
			if len(args) == 0 || !json.Valid(args) {
				args = json.RawMessage("{}")
			}
			out = append(out, sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{
				ID:    id,
				Name:  c.Name,
				Input: args,
			}})
			calls = append(calls, id)
		}
	}
	return out, calls
}
