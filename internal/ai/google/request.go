package google

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/lazy"
)

// The request body of models/{model}:streamGenerateContent.
type generateRequest struct {
	Contents          []content         `json:"contents"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Tools             []tool            `json:"tools,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

// part is one part of a content, in requests and in streamed responses.
type part struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
}

type blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
	Parts    []part          `json:"parts,omitempty"`
}

type tool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// ParametersJSONSchema takes a JSON Schema as it is (unlike the older
	// OpenAPI-subset "parameters" field, it accepts additionalProperties,
	// anyOf, const and the like), so tool schemas need no rewriting.
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type generationConfig struct {
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	ThinkingConfig  *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// skipSignature is the placeholder Google documents for function calls
// that carry no thought signature of their own (calls made by another
// model), which Gemini 3 otherwise rejects.
const skipSignature = "skip_thought_signature_validator"

func textPart(s string) part { return part{Text: &s} }

// buildRequest turns a Pisces request into the Gemini request body.
func buildRequest(req *ai.Request) *generateRequest {
	m := req.Model
	body := &generateRequest{Contents: convertMessages(m, req.Messages)}
	if req.SystemPrompt != "" {
		body.SystemInstruction = &content{Parts: []part{textPart(req.SystemPrompt)}}
	}
	if len(req.Tools) > 0 {
		decls := make([]functionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			decls = append(decls, functionDeclaration{
				Name:                 t.Name,
				Description:          t.Description,
				ParametersJSONSchema: toolSchema(t.Parameters),
			})
		}
		body.Tools = []tool{{FunctionDeclarations: decls}}
	}
	gc := &generationConfig{MaxOutputTokens: maxTokens(req), ThinkingConfig: thinkingFor(m, req.ThinkingLevel, req.ThinkingBudgets)}
	if gc.MaxOutputTokens > 0 || gc.ThinkingConfig != nil {
		body.GenerationConfig = gc
	}
	return body
}

// maxTokens is the request's cap, or min(model.MaxTokens, 32000).
func maxTokens(req *ai.Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return min(req.Model.MaxTokens, 32000)
}

// toolSchema returns a tool's parameter schema without the members Gemini
// refuses ("$schema"); an empty schema becomes an empty object schema.
func toolSchema(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return raw
	}
	if _, ok := obj["$schema"]; !ok {
		return raw
	}
	// Remove the member without reordering the others.
	var out bytes.Buffer
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return raw
	}
	out.WriteByte('{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return raw
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return raw
		}
		if key == "$schema" {
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(val)
	}
	out.WriteByte('}')
	return out.Bytes()
}

var geminiVersion = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`gemini-(\d+)`) }}

// geminiMajor returns the major version in a Gemini model id (0 if none).
// The "-latest" aliases of Flash point at Gemini 3.
func geminiMajor(id string) int {
	id = strings.ToLower(id)
	if id == "gemini-flash-latest" || id == "gemini-flash-lite-latest" {
		return 3
	}
	if m := geminiVersion.Get().FindStringSubmatch(id); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func isPro(id string) bool { return strings.Contains(strings.ToLower(id), "-pro") }

// thinkingFor maps a thinking level onto thinkingConfig (pi-facts §8.3):
// Gemini 3 takes a thinkingLevel (LOW/HIGH on Pro, MINIMAL..HIGH on Flash),
// older models a token budget (Gemini 2.5 tables, else -1 = dynamic).
// "off" turns thinking off where the model allows it and to its minimum
// where it does not. Models without reasoning get no thinkingConfig.
func thinkingFor(m *ai.Model, level string, budgets map[string]int) *thinkingConfig {
	if !m.Reasoning {
		return nil
	}
	switch level {
	case "xhigh", "max":
		level = "high"
	case "", "off", "minimal", "low", "medium", "high":
	default:
		level = "high"
	}
	id := strings.ToLower(m.ID)
	v3 := geminiMajor(id) >= 3
	if level == "" || level == "off" {
		switch {
		case v3 && isPro(id):
			return &thinkingConfig{ThinkingLevel: "LOW"} // Gemini 3 Pro cannot turn thinking off
		case v3:
			return &thinkingConfig{ThinkingLevel: "MINIMAL"}
		case strings.Contains(id, "2.5-pro"):
			n := 128 // Gemini 2.5 Pro cannot turn thinking off either
			return &thinkingConfig{ThinkingBudget: &n}
		default:
			n := 0
			return &thinkingConfig{ThinkingBudget: &n}
		}
	}
	if v3 {
		var l string
		if isPro(id) {
			l = map[string]string{"minimal": "LOW", "low": "LOW", "medium": "HIGH", "high": "HIGH"}[level]
		} else {
			l = strings.ToUpper(level)
		}
		return &thinkingConfig{IncludeThoughts: true, ThinkingLevel: l}
	}
	n := -1
	if b, ok := budgets[level]; ok {
		n = b
	} else if strings.Contains(id, "2.5-pro") {
		n = map[string]int{"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}[level]
	} else if strings.Contains(id, "2.5-flash") {
		n = map[string]int{"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}[level]
	}
	return &thinkingConfig{IncludeThoughts: true, ThinkingBudget: &n}
}

// validSignature reports whether s can be a thought signature (Gemini
// signatures are base64 bytes).
func validSignature(s string) bool {
	if s == "" || len(s)%4 != 0 {
		return false
	}
	_, err := base64.StdEncoding.DecodeString(s)
	return err == nil
}

func hasInput(m *ai.Model, kind string) bool {
	for _, k := range m.Input {
		if k == kind {
			return true
		}
	}
	return false
}

// needsCallID: models served through Google's API that want the ids of
// function calls and responses (pi's requiresToolCallId).
func needsCallID(id string) bool {
	return strings.HasPrefix(id, "claude-") || strings.HasPrefix(id, "gpt-oss-")
}

// convertMessages turns the conversation into Gemini contents. Failed and
// aborted assistant turns are left out (with their tool calls), and a tool
// call that never got a result gets a synthetic error result so the
// function call/response pairing Gemini insists on holds.
func convertMessages(m *ai.Model, msgs []ai.Message) []content {
	var out []content
	images := hasInput(m, "image")
	v3 := geminiMajor(m.ID) >= 3
	withID := needsCallID(m.ID)

	// Tool calls of the last assistant turn still waiting for a result.
	var pending []ai.Content
	flushPending := func() {
		for _, tc := range pending {
			appendFunctionResponse(&out, tc.ID, tc.Name, withID, "No result provided", true, nil, false)
		}
		pending = nil
	}
	answered := func(id string) {
		for i, tc := range pending {
			if tc.ID == id {
				pending = append(pending[:i], pending[i+1:]...)
				return
			}
		}
	}

	for _, msg := range msgs {
		switch v := msg.(type) {
		case *ai.UserMessage:
			flushPending()
			var parts []part
			for _, c := range v.Content.AsBlocks() {
				switch c.Type {
				case ai.ContentText:
					if strings.TrimSpace(c.Text) != "" {
						parts = append(parts, textPart(c.Text))
					}
				case ai.ContentImage:
					if images {
						parts = append(parts, part{InlineData: &blob{MimeType: c.MimeType, Data: c.Data}})
					}
				}
			}
			if len(parts) > 0 {
				out = append(out, content{Role: "user", Parts: parts})
			}
		case *ai.AssistantMessage:
			flushPending()
			if v.StopReason == ai.StopError || v.StopReason == ai.StopAborted {
				continue
			}
			same := v.Provider == m.Provider && v.Model == m.ID
			sig := func(s string) string {
				if same && validSignature(s) {
					return s
				}
				return ""
			}
			var parts []part
			for _, c := range v.Content {
				switch c.Type {
				case ai.ContentText:
					if strings.TrimSpace(c.Text) == "" {
						continue
					}
					p := textPart(c.Text)
					p.ThoughtSignature = sig(c.TextSignature)
					parts = append(parts, p)
				case ai.ContentThinking:
					if strings.TrimSpace(c.Thinking) == "" {
						continue
					}
					if same {
						p := textPart(c.Thinking)
						p.Thought = true
						p.ThoughtSignature = sig(c.ThinkingSignature)
						parts = append(parts, p)
					} else if !c.Redacted {
						// Another model's reasoning goes over as plain text.
						parts = append(parts, textPart(c.Thinking))
					}
				case ai.ContentToolCall:
					args := c.Arguments
					if len(bytes.TrimSpace(args)) == 0 {
						args = json.RawMessage("{}")
					}
					fc := &functionCall{Name: c.Name, Args: args}
					if withID {
						fc.ID = c.ID
					}
					p := part{FunctionCall: fc, ThoughtSignature: sig(c.ThoughtSignature)}
					if p.ThoughtSignature == "" && v3 {
						p.ThoughtSignature = skipSignature
					}
					parts = append(parts, p)
					pending = append(pending, c)
				}
			}
			if len(parts) > 0 {
				out = append(out, content{Role: "model", Parts: parts})
			}
		case *ai.ToolResultMessage:
			answered(v.ToolCallID)
			var texts []string
			var imgs []part
			for _, c := range v.Content {
				switch c.Type {
				case ai.ContentText:
					texts = append(texts, c.Text)
				case ai.ContentImage:
					if images {
						imgs = append(imgs, part{InlineData: &blob{MimeType: c.MimeType, Data: c.Data}})
					}
				}
			}
			text := strings.Join(texts, "\n")
			if text == "" && len(imgs) > 0 {
				text = "(see attached image)"
			}
			appendFunctionResponse(&out, v.ToolCallID, v.ToolName, withID, text, v.IsError, imgs, v3)
		}
	}
	flushPending()
	return out
}

// appendFunctionResponse adds a tool result to the contents, in the same
// user turn as the results just before it. Gemini 3 takes images inside
// the functionResponse; older models get them in a user turn of their own.
func appendFunctionResponse(out *[]content, id, name string, withID bool, text string, isError bool, imgs []part, nested bool) {
	key := "output"
	if isError {
		key = "error"
	}
	resp, _ := json.Marshal(map[string]string{key: text})
	fr := &functionResponse{Name: name, Response: resp}
	if withID {
		fr.ID = id
	}
	if nested && len(imgs) > 0 {
		fr.Parts = imgs
	}
	p := part{FunctionResponse: fr}
	if n := len(*out); n > 0 && (*out)[n-1].Role == "user" && hasFunctionResponse((*out)[n-1].Parts) {
		(*out)[n-1].Parts = append((*out)[n-1].Parts, p)
	} else {
		*out = append(*out, content{Role: "user", Parts: []part{p}})
	}
	if !nested && len(imgs) > 0 {
		*out = append(*out, content{Role: "user", Parts: append([]part{textPart("Tool result image:")}, imgs...)})
	}
}

func hasFunctionResponse(parts []part) bool {
	for _, p := range parts {
		if p.FunctionResponse != nil {
			return true
		}
	}
	return false
}
