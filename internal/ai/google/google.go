// Package google streams model responses over Google's Generative Language
// API (pi's "google-generative-ai" wire API).
//
// It speaks the REST API directly (POST
// {base}/v1beta/models/{model}:streamGenerateContent?alt=sse) rather than
// through google.golang.org/genai, because that SDK does not fit what
// Pisces needs of a provider: when the key is empty it silently falls back
// to GOOGLE_API_KEY / GEMINI_API_KEY (and its base URL to
// GOOGLE_GEMINI_BASE_URL), bypassing Pisces's own key resolution, and it
// refuses to start without a key at all (keyless proxies); it decodes
// function-call arguments into map[string]any, losing the model's key
// order that Pisces keeps byte for byte; it does not expose the response
// headers of a failed request (Retry-After); and its thought signatures are
// []byte, so pi's base64 strings would need a decode/encode round trip.
// The wire format is small and stable, and the tests replay it from a
// local server.
package google

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/fetch"
	"github.com/pisces-agent/pisces/internal/lazy"
)

// API is the wire API this package implements.
const API = "google-generative-ai"

// DefaultBaseURL is used when the model has no baseUrl.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// Provider streams responses from the Gemini API. It makes one HTTP
// request per Stream call and never retries: Pisces's retry layer decides.
type Provider struct {
	// HTTPClient sends the requests (nil: http.DefaultClient). It should
	// have no overall Timeout, since a response streams for minutes.
	HTTPClient *http.Client
	// Images fetches the images messages name by URL (nil:
	// fetch.Default()). The Gemini API takes image bytes (inlineData); its
	// fileData URIs are for files uploaded to Google, so every image URL
	// is fetched here and sent inline.
	Images ai.ImageFetcher
}

// New returns a Provider using http.DefaultClient.
func New() *Provider { return &Provider{} }

var _ ai.Provider = (*Provider)(nil)

// Stream sends req and maps Gemini's streamed response onto assistant
// events (see ai.Provider).
func (p *Provider) Stream(ctx context.Context, req *ai.Request, emit func(ai.AssistantEvent)) *ai.AssistantMessage {
	b := ai.NewBuilder(req.Model, req.ThinkingLevel, emit)
	b.Start()
	if err := ctx.Err(); err != nil {
		return b.Fail(ctx, err)
	}
	if hasInput(req.Model, "image") {
		f := p.Images
		if f == nil {
			f = fetch.Default()
		}
		r, err := ai.InlineRequestImages(ctx, f, req)
		if err != nil {
			return b.Fail(ctx, err)
		}
		req = r
	}
	resp, err := p.send(ctx, req)
	if err != nil {
		return b.Fail(ctx, err)
	}
	defer resp.Body.Close()
	return readStream(ctx, resp.Body, b)
}

// endpoint is the streaming URL of the model. A base URL that already ends
// in an API version (pi's catalogue has ".../v1beta") is used as it is;
// otherwise /v1beta is added.
func endpoint(m *ai.Model) string {
	base := strings.TrimRight(m.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	if !versionSuffix.Get().MatchString(base) {
		base += "/v1beta"
	}
	id := m.ID
	if !strings.HasPrefix(id, "models/") && !strings.HasPrefix(id, "tunedModels/") {
		id = "models/" + id
	}
	return base + "/" + id + ":streamGenerateContent?alt=sse"
}

var versionSuffix = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`/v\d+(?:(?:alpha|beta)\d*)?$`) }}

func (p *Provider) send(ctx context.Context, req *ai.Request) (*http.Response, error) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(buildRequest(req)); err != nil {
		return nil, fmt.Errorf("google: encoding the request: %w", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint(req.Model), &body)
	if err != nil {
		return nil, fmt.Errorf("google: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	if req.APIKey != "" {
		hr.Header.Set("x-goog-api-key", req.APIKey)
	}
	for k, v := range req.Model.Headers {
		hr.Header.Set(k, v)
	}
	client := p.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		base := strings.TrimRight(req.Model.BaseURL, "/")
		if base == "" {
			base = DefaultBaseURL
		}
		return nil, ai.ConnectionError(req.Model.Provider, base, err, err.Error())
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, statusError(resp)
	}
	return resp, nil
}

// apiError is Google's error object ({"error": {...}}).
type apiError struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Status  string            `json:"status"`
	Details []json.RawMessage `json:"details"`
}

// statusError turns a failed HTTP response into a ProviderError carrying
// Google's own message and the retry delay it asked for.
func statusError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	pe := &ai.ProviderError{Status: resp.StatusCode}
	var env struct {
		Error *apiError `json:"error"`
	}
	// Errors come as an object, or (on the streaming endpoint) as an
	// array holding one.
	if json.Unmarshal(raw, &env) != nil || env.Error == nil {
		var arr []struct {
			Error *apiError `json:"error"`
		}
		if json.Unmarshal(raw, &arr) == nil && len(arr) > 0 {
			env.Error = arr[0].Error
		}
	}
	if env.Error != nil && env.Error.Message != "" {
		pe.Message = env.Error.Message
		pe.RetryAfter = retryDelay(env.Error.Details)
	} else if s := strings.TrimSpace(string(raw)); s != "" {
		pe.Message = s
	} else {
		pe.Message = http.StatusText(resp.StatusCode)
	}
	if d := ai.RetryAfter(resp.Header, time.Now()); d > 0 {
		pe.RetryAfter = d
	}
	return pe
}

// retryDelay reads the google.rpc.RetryInfo detail ("retryDelay": "37s")
// Gemini attaches to quota errors.
func retryDelay(details []json.RawMessage) time.Duration {
	for _, d := range details {
		var ri struct {
			Type       string `json:"@type"`
			RetryDelay string `json:"retryDelay"`
		}
		if json.Unmarshal(d, &ri) != nil || !strings.HasSuffix(ri.Type, "google.rpc.RetryInfo") {
			continue
		}
		if dur, err := time.ParseDuration(ri.RetryDelay); err == nil && dur > 0 {
			return dur
		}
	}
	return 0
}

// One streamed chunk: a GenerateContentResponse, or an error object.
type chunk struct {
	Candidates     []candidate     `json:"candidates"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata"`
	ResponseID     string          `json:"responseId"`
	PromptFeedback *promptFeedback `json:"promptFeedback"`
	Error          *apiError       `json:"error"`
}

type candidate struct {
	Content *struct {
		Parts []part `json:"parts"`
	} `json:"content"`
	FinishReason  string `json:"finishReason"`
	FinishMessage string `json:"finishMessage"`
}

type usageMetadata struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
}

type promptFeedback struct {
	BlockReason        string `json:"blockReason"`
	BlockReasonMessage string `json:"blockReasonMessage"`
}

// callSeq numbers generated tool call ids.
var callSeq atomic.Int64

// streamState follows the open text or thinking block while chunks arrive.
type streamState struct {
	b       *ai.Builder
	cur     int    // index of the open text/thinking block, -1 when none
	curKind string // ai.ContentText or ai.ContentThinking
	ids     map[string]bool
	calls   int
	finish  string // the finishReason, once seen
	finMsg  string
	blocked *promptFeedback
}

func (s *streamState) closeBlock() {
	if s.cur >= 0 {
		s.b.End(s.cur)
		s.cur = -1
	}
}

func (s *streamState) textPart(p part) {
	kind := ai.ContentText
	if p.Thought {
		kind = ai.ContentThinking
	}
	text := *p.Text
	if s.cur < 0 || s.curKind != kind {
		// An empty part opens no block unless it carries a signature
		// (Gemini sends the signature of a text answer on a last, empty
		// part) that must be kept.
		if text == "" && p.ThoughtSignature == "" {
			return
		}
		s.closeBlock()
		if kind == ai.ContentThinking {
			s.cur = s.b.BeginThinking()
		} else {
			s.cur = s.b.BeginText()
		}
		s.curKind = kind
	}
	if p.ThoughtSignature != "" {
		s.b.SetSignature(s.cur, p.ThoughtSignature)
	}
	if text != "" {
		s.b.Delta(s.cur, text)
	}
}

func (s *streamState) callPart(p part) {
	s.closeBlock()
	fc := p.FunctionCall
	id := fc.ID
	if id == "" || s.ids[id] {
		id = fmt.Sprintf("%s_%d_%d", fc.Name, time.Now().UnixMilli(), callSeq.Add(1))
	}
	s.ids[id] = true
	s.calls++
	args := "{}"
	if t := bytes.TrimSpace(fc.Args); len(t) > 0 && string(t) != "null" {
		var buf bytes.Buffer
		if json.Compact(&buf, t) == nil {
			args = buf.String()
		} else {
			args = string(t)
		}
	}
	i := s.b.BeginToolCall(id, fc.Name)
	s.b.Delta(i, args)
	if p.ThoughtSignature != "" {
		s.b.SetSignature(i, p.ThoughtSignature)
	}
	s.b.End(i)
}

// handle applies one chunk; a non-nil error ends the stream.
func (s *streamState) handle(c *chunk) error {
	if c.Error != nil {
		msg := c.Error.Message
		if msg == "" {
			msg = c.Error.Status
		}
		return &ai.ProviderError{Status: c.Error.Code, Message: msg, RetryAfter: retryDelay(c.Error.Details)}
	}
	if c.ResponseID != "" {
		s.b.SetResponseID(c.ResponseID)
	}
	if c.PromptFeedback != nil && c.PromptFeedback.BlockReason != "" {
		s.blocked = c.PromptFeedback
	}
	if len(c.Candidates) > 0 {
		cand := c.Candidates[0]
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				switch {
				case p.FunctionCall != nil:
					s.callPart(p)
				case p.Text != nil:
					s.textPart(p)
				}
			}
		}
		if cand.FinishReason != "" {
			s.finish = cand.FinishReason
			s.finMsg = cand.FinishMessage
			s.b.SetRawStopReason(cand.FinishReason)
		}
	}
	if u := c.UsageMetadata; u != nil {
		s.b.SetUsage(ai.Usage{
			Input:     max(u.PromptTokenCount-u.CachedContentTokenCount, 0),
			Output:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
			CacheRead: u.CachedContentTokenCount,
		})
	}
	return nil
}

// finishMessage ends the stream once the body is exhausted. As in pi, the
// open block is closed (with its end event) first, also when the finish
// reason is a failure: everything the model sent did arrive.
func (s *streamState) finishMessage(ctx context.Context) *ai.AssistantMessage {
	s.closeBlock()
	switch s.finish {
	case "STOP":
		if s.calls > 0 {
			return s.b.Done(ai.StopToolUse)
		}
		return s.b.Done(ai.StopStop)
	case "MAX_TOKENS":
		return s.b.Done(ai.StopLength)
	case "":
		if s.blocked != nil {
			msg := "Prompt blocked: " + s.blocked.BlockReason
			if s.blocked.BlockReasonMessage != "" {
				msg += ": " + s.blocked.BlockReasonMessage
			}
			return s.b.Fail(ctx, errors.New(msg))
		}
		return s.b.Fail(ctx, &ai.ProviderError{Message: "stream ended unexpectedly: the response has no finish reason"})
	default:
		msg := "Provider stopped with: " + s.finish
		if s.finMsg != "" {
			msg += ": " + s.finMsg
		}
		return s.b.Fail(ctx, errors.New(msg))
	}
}

// readStream reads the SSE body ("data: {json}" events separated by blank
// lines) and drives the builder.
func readStream(ctx context.Context, body io.Reader, b *ai.Builder) *ai.AssistantMessage {
	s := &streamState{b: b, cur: -1, ids: map[string]bool{}}
	r := bufio.NewReaderSize(body, 64<<10)
	var data bytes.Buffer
	hasData := false
	dispatch := func() error {
		if !hasData {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err // aborted while buffered events remain
		}
		raw := data.Bytes()
		hasData = false
		defer data.Reset()
		if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "[DONE]" {
			return nil
		}
		var c chunk
		if err := json.Unmarshal(raw, &c); err != nil {
			return &ai.ProviderError{Message: "invalid stream chunk: " + err.Error()}
		}
		return s.handle(&c)
	}
	for {
		line, rerr := r.ReadBytes('\n')
		if len(line) > 0 && rerr == nil {
			line = bytes.TrimRight(line, "\r\n")
			var err error
			switch {
			case len(line) == 0:
				err = dispatch()
			case line[0] == ':':
				// comment
			case bytes.HasPrefix(line, []byte("data:")):
				v := line[5:]
				if len(v) > 0 && v[0] == ' ' {
					v = v[1:]
				}
				if hasData {
					data.WriteByte('\n')
				}
				data.Write(v)
				hasData = true
			case line[0] == '{':
				// A bare JSON line (Google sends some errors this way).
				if hasData {
					data.WriteByte('\n')
				}
				data.Write(line)
				hasData = true
			}
			if err != nil {
				return b.Fail(ctx, err)
			}
			continue
		}
		if rerr == nil {
			continue
		}
		if ctx.Err() != nil {
			return b.Fail(ctx, ctx.Err())
		}
		if rerr != io.EOF {
			if s.finish != "" {
				// Everything arrived; only the close failed.
				break
			}
			return b.Fail(ctx, &ai.ProviderError{Message: "stream ended unexpectedly: " + rerr.Error()})
		}
		// At EOF an unterminated last event counts only if it is whole.
		if len(line) > 0 {
			line = bytes.TrimRight(line, "\r\n")
			if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				if hasData {
					data.WriteByte('\n')
				}
				data.Write(bytes.TrimPrefix(v, []byte(" ")))
				hasData = true
			}
		}
		if hasData && json.Valid(data.Bytes()) {
			if err := dispatch(); err != nil {
				return b.Fail(ctx, err)
			}
		}
		break
	}
	return s.finishMessage(ctx)
}
