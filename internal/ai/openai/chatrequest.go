package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
)

// The Chat Completions request, written here rather than with the
// openai-go SDK: its chat types live in the SDK's root package, which
// links (and initialises at every start) the whole API surface, realtime
// and audio included. The body is byte for byte what the SDK wrote
// (testdata/requests holds it for every kind of request): members in the
// order of the SDK's structs, no HTML escaping, extra members after the
// others in the order of their names, "stream": true last.

// chatRequest is the body of a Chat Completions request.
type chatRequest struct {
	Messages            []chatMessage      `json:"messages,omitempty"`
	Model               string             `json:"model,omitempty"`
	MaxCompletionTokens int64              `json:"max_completion_tokens,omitempty"`
	MaxTokens           int64              `json:"max_tokens,omitempty"`
	PromptCacheKey      string             `json:"prompt_cache_key,omitempty"`
	Store               *bool              `json:"store,omitempty"`
	ReasoningEffort     string             `json:"reasoning_effort,omitempty"`
	ServiceTier         string             `json:"service_tier,omitempty"`
	StreamOptions       *chatStreamOptions `json:"stream_options,omitempty"`
	Tools               []chatTool         `json:"tools,omitempty"`

	// Members of other servers' dialects, written after the others.
	ChatTemplateKwargs *chatTemplateKwargs `json:"-"` // "chat_template_kwargs" (Qwen chat templates)
	EnableThinking     *bool               `json:"-"` // "enable_thinking" (Qwen)
	Thinking           string              `json:"-"` // "thinking": {"type": ...} (Z.ai)
	EmptyTools         bool                `json:"-"` // "tools": [] when there are no tools but tool history
}

type chatStreamOptions struct {
	IncludeUsage bool `json:"include_usage,omitempty"`
}

type chatTemplateKwargs struct {
	EnableThinking bool `json:"enable_thinking"`
}

type chatTool struct {
	Function chatFunction `json:"function"`
	Type     string       `json:"type"` // "function"
}

type chatFunction struct {
	Name        string          `json:"name"`
	Strict      *bool           `json:"strict,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// chatMessage is a message of any role; Content is a string or
// []any of chatTextPart and chatImagePart (nil: no content member).
type chatMessage struct {
	Content    any            `json:"content,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	Role       string         `json:"role"`

	// One extra member after the others: the reasoning text of an
	// assistant turn under the server's own name, or a tool result's
	// "name".
	extraKey, extraValue string
}

type chatTextPart struct {
	Text string `json:"text"`
	Type string `json:"type"` // "text"
}

type chatImagePart struct {
	ImageURL chatImageURL `json:"image_url"`
	Type     string       `json:"type"` // "image_url"
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatToolCall struct {
	ID       string           `json:"id"`
	Function chatCallFunction `json:"function"`
	Type     string           `json:"type"` // "function"
}

type chatCallFunction struct {
	Arguments string `json:"arguments"`
	Name      string `json:"name"`
}

func textPart(s string) chatTextPart { return chatTextPart{Text: s, Type: "text"} }

func imagePart(c ai.Content) chatImagePart { return imagePartIn(c, nil) }

// imagePartIn is imagePart with a long image in bl.
func imagePartIn(c ai.Content, bl *blobs) chatImagePart {
	return chatImagePart{ImageURL: chatImageURL{URL: imageURLIn(c, bl)}, Type: "image_url"}
}

// encodeJSON is encoding/json's encoding without HTML escaping.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// appendMember adds "key": raw to the encoded object b.
func appendMember(b []byte, key string, raw []byte) []byte {
	b = b[:len(b)-1] // the closing brace
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	b = append(b, `":`...)
	b = append(b, raw...)
	return append(b, '}')
}

// extraString encodes the string value of an extra member as the SDK did
// (through sjson): as it is when it is plain ASCII without quotes,
// backslashes or control characters, else with encoding/json's Marshal,
// which escapes <, > and & as well.
func extraString(s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > 0x7f || c == '"' || c == '\\' {
			b, _ := json.Marshal(s)
			return b
		}
	}
	return []byte(`"` + s + `"`)
}

func (m chatMessage) MarshalJSON() ([]byte, error) {
	type plain chatMessage // without this method
	b, err := encodeJSON(plain(m))
	if err != nil || m.extraKey == "" {
		return b, err
	}
	return appendMember(b, m.extraKey, extraString(m.extraValue)), nil
}

// MarshalJSON is the request body ("stream": true included). Send the
// result of calling it: json.Marshal would escape HTML characters in it.
func (r *chatRequest) MarshalJSON() ([]byte, error) {
	type plain chatRequest // without this method
	b, err := encodeJSON((*plain)(r))
	if err != nil {
		return nil, err
	}
	if k := r.ChatTemplateKwargs; k != nil {
		b = appendMember(b, "chat_template_kwargs", []byte(`{"enable_thinking":`+boolText(k.EnableThinking)+`}`))
	}
	if r.EnableThinking != nil {
		b = appendMember(b, "enable_thinking", []byte(boolText(*r.EnableThinking)))
	}
	if r.Thinking != "" {
		t, _ := json.Marshal(r.Thinking)
		b = appendMember(b, "thinking", []byte(`{"type":`+string(t)+`}`))
	}
	if r.EmptyTools {
		b = appendMember(b, "tools", []byte("[]"))
	}
	return appendMember(b, "stream", []byte("true")), nil
}

func boolText(v bool) string {
	if v {
		return "true"
	}
	return "false"
}

// endpoint resolves path against a base URL the way the SDK did: a base
// path gets a trailing slash, then path is resolved as a relative
// reference.
func endpoint(base, path string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	if u.Path != "" && !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	ref, err := u.Parse(path)
	if err != nil {
		return "", err
	}
	return ref.String(), nil
}

// postJSON sends body to path under the model's base URL: JSON in and
// out, the model's headers (which may replace the defaults), then the
// key as a bearer token. The response is returned whatever its status.
func postJSON(ctx context.Context, hc *http.Client, req *ai.Request, path string, body []byte) (*http.Response, error) {
	return postBody(ctx, hc, req, path, bytes.NewReader(body), int64(len(body)), func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(body)), nil
	})
}

// postBody is postJSON with a body of n bytes read from body (again must
// return a fresh reader of the same bytes, for a redirect).
func postBody(ctx context.Context, hc *http.Client, req *ai.Request, path string, body io.Reader, n int64, again func() (io.ReadCloser, error)) (*http.Response, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	u, err := endpoint(baseURL(req.Model), path)
	if err != nil {
		return nil, errors.New("invalid base URL: " + err.Error())
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, body)
	if err != nil {
		return nil, err
	}
	hr.ContentLength = n
	hr.GetBody = again
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("User-Agent", "pisces")
	for k, v := range req.Model.Headers {
		hr.Header.Set(k, v)
	}
	if req.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+req.APIKey)
	}
	return hc.Do(hr)
}
