// Package openai implements the "openai-completions" and "openai-responses"
// wire APIs. openai-completions also serves every OpenAI-compatible server
// (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, Groq, Cerebras, xAI,
// DeepSeek, Mistral, Together, Fireworks, ...); the model's compat flags
// (models.json) adapt the request to each.
//
// The Responses API goes through the official openai-go SDK's responses
// package, which sends the request (base URL, key, headers, error bodies)
// with its own retries turned off. Chat Completions is written and sent
// here (chatrequest.go) and its chunks are decoded here (chunk.go), with the
// SDK's exact request bytes and decoding rules: the SDK's chat types live
// in its root package, which would link and initialise its whole API
// surface (realtime, audio, webhooks, ...) at every start of the binary.
// The tests check both against the SDK.
//
// The SSE body is read event by event here so that a stream cut before its
// terminal event ([DONE], response.completed) is reported as such and not
// mistaken for a finished answer.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/openai/openai-go/v3/option"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/fetch"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/lazy"
)

// DefaultBaseURL is used when a model has no baseUrl.
const DefaultBaseURL = "https://api.openai.com/v1"

// API names of the two wire APIs.
const (
	APICompletions = "openai-completions"
	APIResponses   = "openai-responses"
)

// defaultMaxTokens caps the response when the request gives no limit.
const defaultMaxTokens = 32000

func baseURL(m *ai.Model) string {
	if s := strings.TrimSpace(m.BaseURL); s != "" {
		return s
	}
	return DefaultBaseURL
}

// maxTokens is req.MaxTokens, else min(model.MaxTokens, 32000); 0 = none.
func maxTokens(req *ai.Request) int64 {
	if req.MaxTokens > 0 {
		return int64(req.MaxTokens)
	}
	n := req.Model.MaxTokens
	if n <= 0 || n > defaultMaxTokens {
		n = defaultMaxTokens
	}
	return int64(n)
}

// thinkingOn reports whether the request asks the model to reason.
func thinkingOn(req *ai.Request) bool {
	return req.Model.Reasoning && req.ThinkingLevel != "" && req.ThinkingLevel != "off"
}

// clientOptions are the SDK options of the Responses API. The SDK's
// environment defaults (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID, ...)
// are not used: services are built without openai.NewClient, so a key meant
// for one provider never leaks to another.
func clientOptions(hc *http.Client, req *ai.Request, raw **http.Response) []option.RequestOption {
	if hc == nil {
		hc = http.DefaultClient
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(hc),
		option.WithBaseURL(baseURL(req.Model)),
		option.WithMaxRetries(0),
		option.WithResponseInto(raw),
	}
	if req.APIKey != "" {
		opts = append(opts, option.WithAPIKey(req.APIKey))
	}
	for k, v := range req.Model.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return opts
}

// requestError turns a failed request into the error handed to Builder.Fail:
// an HTTP error status becomes a ProviderError with the vendor's message and
// Retry-After; a transport failure a ProviderError with Status 0; a
// cancelled context stays as it is (the builder reports "aborted").
func requestError(ctx context.Context, m *ai.Model, res *http.Response, err error) error {
	if res != nil && res.StatusCode >= 400 {
		return statusError(res)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return ai.ConnectionError(m.Provider, baseURL(m), err, cleanErr(err))
}

// statusError reads an HTTP error response.
func statusError(res *http.Response) *ai.ProviderError {
	var body []byte
	if res.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(res.Body, 1<<20))
		_ = res.Body.Close()
	}
	msg := errorMessage(body)
	if msg == "" {
		msg = http.StatusText(res.StatusCode)
	}
	if msg == "" {
		msg = "HTTP error"
	}
	return &ai.ProviderError{Status: res.StatusCode, Message: msg, RetryAfter: retryAfter(res.Header, time.Now())}
}

// errorMessage finds the vendor's message in an error body: OpenAI's
// {"error":{"message":...}}, {"error":"..."} (Ollama), {"message":...},
// {"detail":...} (some proxies), or the text itself.
func errorMessage(body []byte) string {
	text := strings.TrimSpace(string(body))
	if text == "" {
		return ""
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(body, &v) == nil {
		if e, ok := v["error"]; ok {
			var s string
			if json.Unmarshal(e, &s) == nil && s != "" {
				return s
			}
			var obj struct {
				Message  json.RawMessage `json:"message"`
				Metadata struct {
					Raw json.RawMessage `json:"raw"`
				} `json:"metadata"`
			}
			if json.Unmarshal(e, &obj) == nil {
				msg := jsonText(obj.Message)
				if raw := jsonText(obj.Metadata.Raw); raw != "" && msg != "" {
					msg += "\n" + raw
				}
				if msg != "" {
					return msg
				}
			}
		}
		for _, k := range []string{"message", "detail", "error_message"} {
			if s := jsonText(v[k]); s != "" {
				return s
			}
		}
	}
	if len(text) > 2000 {
		text = text[:2000] + "…"
	}
	return text
}

// jsonText is a JSON string's value, or other JSON compacted ("" for none).
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// retryAfter is the shared Retry-After reading.
var retryAfter = ai.RetryAfter

// cleanErr is an error's text without the URL wrapping of net/http.
func cleanErr(err error) string {
	if err == nil {
		return "unknown error"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// streamReadError is the error of a body that failed mid-stream.
func streamReadError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &ai.ProviderError{Message: "stream ended unexpectedly (connection error: " + cleanErr(err) + ")"}
}

// errStreamCut is reported when the body ends before the terminal event.
func errStreamCut(what string) error {
	return &ai.ProviderError{Message: "stream ended unexpectedly (connection error: the connection closed before " + what + ")"}
}

// ---------------------------------------------------------------------------
// Messages shared by both APIs

// prepared is one message of the conversation ready for conversion.
type prepared struct {
	user       *ai.UserMessage
	assistant  *ai.AssistantMessage
	toolResult *ai.ToolResultMessage
}

// prepareMessages drops assistant turns that failed or were aborted (they
// are incomplete and may hold tool calls without results) and adds a
// "No result provided" error result for every tool call left unanswered,
// which both APIs require.
func prepareMessages(msgs []ai.Message) []prepared {
	var out []prepared
	var pending []ai.Content // tool calls of the last assistant turn without a result yet
	answered := map[string]bool{}
	flush := func() {
		for _, tc := range pending {
			if !answered[tc.ID] {
				out = append(out, prepared{toolResult: &ai.ToolResultMessage{
					Role: ai.RoleToolResult, ToolCallID: tc.ID, ToolName: tc.Name,
					Content: []ai.Content{ai.Text("No result provided")}, IsError: true,
				}})
			}
		}
		pending = nil
		answered = map[string]bool{}
	}
	for _, m := range msgs {
		switch v := m.(type) {
		case *ai.UserMessage:
			flush()
			out = append(out, prepared{user: v})
		case *ai.AssistantMessage:
			flush()
			if v.StopReason == ai.StopError || v.StopReason == ai.StopAborted {
				continue
			}
			pending = v.ToolCalls()
			out = append(out, prepared{assistant: v})
		case *ai.ToolResultMessage:
			// A result must follow the call it answers; one whose call was
			// dropped (or answered already) would be rejected.
			if !isPending(pending, v.ToolCallID) || answered[v.ToolCallID] {
				continue
			}
			answered[v.ToolCallID] = true
			out = append(out, prepared{toolResult: v})
		}
	}
	flush()
	return out
}

func isPending(calls []ai.Content, id string) bool {
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}

// sameModel reports whether an assistant message came from this very model
// (its signatures and provider-specific fields can be sent back).
func sameModel(m *ai.AssistantMessage, model *ai.Model) bool {
	return m.Provider == model.Provider && m.API == model.API && m.Model == model.ID
}

func supportsImages(m *ai.Model) bool {
	for _, k := range m.Input {
		if k == "image" {
			return true
		}
	}
	return false
}

// imageURL is what an image is sent as: its own URL when it has one (the
// request keeps URLs only for servers that take them; see passImageURLs),
// else a data URL.
func imageURL(c ai.Content) string {
	if c.URL != "" {
		return c.URL
	}
	return "data:" + c.MimeType + ";base64," + c.Data
}

// passImageURLs reports whether image URLs go to the server as they are:
// for OpenAI's own API, which fetches them itself, unless the model's compat
// says otherwise ("supportsImageUrls"). Every other OpenAI-compatible
// server (Ollama, vLLM, llama.cpp, hosted vendors) is sent the fetched
// bytes as a data URL, since which of them fetch URLs varies by server and
// version; "supportsImageUrls": true opts one in.
func passImageURLs(m *ai.Model) bool {
	return ai.PassImageURLs(m, baseURL(m), "api.openai.com")
}

// inlineImages fetches the request's image URLs (with f, nil:
// fetch.Default()) when the model takes images and its server is not
// handed URLs.
func inlineImages(ctx context.Context, f ai.ImageFetcher, req *ai.Request) (*ai.Request, error) {
	if !supportsImages(req.Model) || passImageURLs(req.Model) {
		return req, nil
	}
	if f == nil {
		f = fetch.Default()
	}
	return ai.InlineRequestImages(ctx, f, req)
}

// imageURLIn is imageURL with a long image in bl.
func imageURLIn(c ai.Content, bl *blobs) string {
	if c.URL != "" {
		return c.URL
	}
	return bl.join("data:"+c.MimeType+";base64,", c.Data)
}

// toolResultText is the text of a tool result (a placeholder when it only
// has images).
func toolResultText(m *ai.ToolResultMessage) string { return toolResultTextIn(m, nil) }

// toolResultTextIn is toolResultText with a long text in bl.
func toolResultTextIn(m *ai.ToolResultMessage, bl *blobs) string {
	var parts []string
	for _, c := range m.Content {
		if c.Type == ai.ContentText {
			parts = append(parts, c.Text)
		}
	}
	if len(parts) == 0 {
		for _, c := range m.Content {
			if c.Type == ai.ContentImage {
				return "(see attached image)"
			}
		}
		return ""
	}
	return bl.joinWith(parts, "\n")
}

func toolResultImages(m *ai.ToolResultMessage) []ai.Content {
	var out []ai.Content
	for _, c := range m.Content {
		if c.Type == ai.ContentImage {
			out = append(out, c)
		}
	}
	return out
}

// toolImagesIntro starts the user message that carries tool-result images.
const toolImagesIntro = "Attached image(s) from tool result:"

// argumentsJSON is a tool call's arguments as the JSON text to send back.
func argumentsJSON(c ai.Content) string {
	if len(c.Arguments) == 0 {
		return "{}"
	}
	return string(c.Arguments)
}

// toolSchema is a tool's JSON Schema as its definition gives it (an MCP
// tool's as its server wrote it: key order and "$schema" kept), written
// as pi's JSON.stringify writes it; anything but a JSON object is an
// empty object schema.
func toolSchema(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '{' {
		if b, err := jsonx.Restringify(t); err == nil {
			return b
		}
	}
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

var nonIDChars = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_-]`) }}

// splitToolID splits a Responses tool call id "call_id|item_id".
func splitToolID(id string) (callID, itemID string) {
	callID, itemID, _ = strings.Cut(id, "|")
	return callID, itemID
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
