// Package anthropic implements the "anthropic-messages" wire API: Claude's
// Messages API streamed over SSE, through the official Go SDK.
//
// The SDK's own retries are turned off; Pisces has one retry layer and this
// package only reports what failed (status, the vendor's message and any
// Retry-After) as an *ai.ProviderError.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/fetch"
)

// API is the wire API name this provider serves.
const API = "anthropic-messages"

// DefaultBaseURL is used when the model has no baseUrl.
const DefaultBaseURL = "https://api.anthropic.com"

// Beta features requested with the anthropic-beta header.
const (
	betaInterleavedThinking = "interleaved-thinking-2025-05-14"
	betaOAuth               = "oauth-2025-04-20"
	betaClaudeCode          = "claude-code-20250219"
)

// oauthIdentity is the system block an Anthropic OAuth (subscription) token
// must be used with.
const oauthIdentity = "You are Claude Code, Anthropic's official CLI for Claude."

// oauthUserAgent is the User-Agent of requests with a subscription token
// (Claude Code's, as pi 1.5 sends it).
const oauthUserAgent = "claude-cli/2.1.322"

// Provider streams responses from the Anthropic Messages API.
type Provider struct {
	// HTTPClient sends the requests (nil: a shared client without timeout).
	HTTPClient *http.Client
	// Images fetches the image URLs the server is not handed (nil:
	// fetch.Default()); see passImageURLs.
	Images ai.ImageFetcher
}

// New returns a Provider with the default HTTP client.
func New() *Provider { return &Provider{} }

var defaultClient = &http.Client{}

// IsOAuthToken reports whether key is an Anthropic OAuth access token (sent
// as a bearer token instead of x-api-key).
func IsOAuthToken(key string) bool { return strings.HasPrefix(key, "sk-ant-oat") }

// Stream sends req and maps the response stream onto the assistant events.
func (p *Provider) Stream(ctx context.Context, req *ai.Request, emit func(ai.AssistantEvent)) *ai.AssistantMessage {
	b := ai.NewBuilder(req.Model, req.ThinkingLevel, emit)
	b.Start()
	if ctx.Err() != nil {
		return b.Fail(ctx, ctx.Err())
	}

	if supportsImages(req.Model) && !passImageURLs(req.Model) {
		r, err := ai.InlineRequestImages(ctx, p.images(), req)
		if err != nil {
			return b.Fail(ctx, err)
		}
		req = r
	}

	oauth := IsOAuthToken(req.APIKey)
	params, betas, err := buildParams(req, oauth)
	if err != nil {
		return b.Fail(ctx, err)
	}

	if err := checkBaseURL(req.Model.BaseURL); err != nil {
		return b.Fail(ctx, err)
	}

	var resp *http.Response
	opts := p.options(req, oauth, betas, &resp)
	svc := sdk.NewMessageService(opts...)
	stream := svc.NewStreaming(ctx, params)
	defer stream.Close()

	st := newStreamState(b)
	if oauth {
		st.toolName = fromClaudeCode(req.Tools)
	}
	for stream.Next() {
		st.handle(stream.Current())
		if st.stopped {
			break
		}
	}
	if err := stream.Err(); err != nil {
		return b.Fail(ctx, streamError(ctx, req.Model, err, resp))
	}
	if ctx.Err() != nil {
		return b.Fail(ctx, ctx.Err())
	}
	return st.finish(ctx)
}

// passImageURLs reports whether image URLs go to the server as URL image
// sources: for Anthropic's own API, which fetches them itself, unless the
// model's compat says otherwise ("supportsImageUrls"). Other servers of the
// Messages API (proxies, other vendors) are sent the fetched bytes.
func passImageURLs(m *ai.Model) bool {
	base := strings.TrimSpace(m.BaseURL)
	if base == "" {
		base = DefaultBaseURL
	}
	return ai.PassImageURLs(m, base, "api.anthropic.com")
}

func (p *Provider) images() ai.ImageFetcher {
	if p.Images != nil {
		return p.Images
	}
	return fetch.Default()
}

// options are the SDK request options for one request: base URL, the key,
// headers, the HTTP client, and no hidden retries.
func (p *Provider) options(req *ai.Request, oauth bool, betas []string, resp **http.Response) []option.RequestOption {
	base := strings.TrimSpace(req.Model.BaseURL)
	if base == "" {
		base = DefaultBaseURL
	}
	client := p.HTTPClient
	if client == nil {
		client = defaultClient
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(client),
		option.WithMaxRetries(0),
		option.WithResponseInto(resp),
	}
	if oauth {
		betas = append([]string{betaClaudeCode, betaOAuth}, betas...)
		// Claude Code's headers, as pi sends them with a subscription.
		opts = append(opts, option.WithAuthToken(req.APIKey), option.WithHeaderDel("x-api-key"),
			option.WithHeader("User-Agent", oauthUserAgent), option.WithHeader("x-app", "cli"),
			option.WithHeader("anthropic-dangerous-direct-browser-access", "true"),
			option.WithHeader("Accept", "application/json"))
	} else if req.APIKey != "" {
		opts = append(opts, option.WithAPIKey(req.APIKey))
	}
	for k, v := range req.Model.Headers {
		if strings.EqualFold(k, "anthropic-beta") {
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					betas = append(betas, s)
				}
			}
			continue
		}
		opts = append(opts, option.WithHeader(k, v))
	}
	if len(betas) > 0 {
		opts = append(opts, option.WithHeader("anthropic-beta", strings.Join(dedupe(betas), ",")))
	}
	return opts
}

// checkBaseURL rejects a base URL the request could never be sent to (a
// configuration error, not worth retrying).
func checkBaseURL(base string) error {
	base = strings.TrimSpace(base)
	if base == "" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("invalid base URL %q for the anthropic-messages API", base)
	}
	return nil
}

func dedupe(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := ss[:0:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// streamError turns what the SDK reported into the error the Builder gets:
// an *ai.ProviderError for HTTP errors, error events and cut connections.
func streamError(ctx context.Context, m *ai.Model, err error, resp *http.Response) error {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return err
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return apiError(apiErr)
	}
	msg := err.Error()
	// An error event the SDK could not parse as an API error.
	if raw, ok := strings.CutPrefix(msg, "received error while streaming: "); ok {
		typ, m := errorBody([]byte(raw))
		if m == "" {
			m = strings.TrimSpace(raw)
		}
		return &ai.ProviderError{Status: statusForType(typ), Message: m}
	}
	if resp != nil && resp.StatusCode < 400 {
		// The response had begun: the connection broke mid-stream, or the
		// stream carried something that is not an event.
		return &ai.ProviderError{Message: "stream ended unexpectedly: " + msg}
	}
	base := strings.TrimSpace(m.BaseURL)
	if base == "" {
		base = DefaultBaseURL
	}
	return ai.ConnectionError(m.Provider, base, err, msg)
}

// apiError converts an HTTP error response or an error event.
func apiError(e *sdk.Error) *ai.ProviderError {
	typ, msg := errorBody([]byte(e.RawJSON()))
	if typ == "" {
		typ = string(e.Type())
	}
	status := e.StatusCode
	if status < 400 {
		// An error event inside a 200 stream: the status it stands for.
		status = statusForType(typ)
	}
	if msg == "" {
		msg = strings.TrimSpace(e.RawJSON())
		if len(msg) > 1000 {
			msg = msg[:1000]
		}
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	if msg == "" {
		msg = "unknown error"
	}
	pe := &ai.ProviderError{Status: status, Message: msg}
	if e.Response != nil {
		pe.RetryAfter = retryAfter(e.Response.Header, nowFunc())
	}
	return pe
}

// statusForType is the HTTP status Anthropic uses for an error type.
func statusForType(typ string) int {
	switch typ {
	case "invalid_request_error":
		return 400
	case "authentication_error":
		return 401
	case "billing_error":
		return 402
	case "permission_error":
		return 403
	case "not_found_error":
		return 404
	case "request_too_large":
		return 413
	case "rate_limit_error":
		return 429
	case "timeout_error":
		return 504
	case "overloaded_error":
		return 529
	default:
		return 500
	}
}

// stopError is a response the model ended in a way Pisces reports as an
// error (a refusal, an unknown stop reason). It is not retried.
type stopError struct{ msg string }

func (e *stopError) Error() string { return e.msg }

func errorf(format string, a ...any) error { return &stopError{fmt.Sprintf(format, a...)} }
