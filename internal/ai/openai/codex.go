package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/pisces-agent/pisces/internal/ai"
)

// APICodexResponses is the Responses API of ChatGPT's Codex backend
// (ChatGPT Plus/Pro subscriptions, provider openai-codex).
const APICodexResponses = "openai-codex-responses"

// CodexResponses streams the Codex backend's Responses API: POST
// {baseUrl}/codex/responses with a ChatGPT access token, the account id
// read from it, and the body the backend takes (the system prompt as
// instructions, store false, encrypted reasoning always included, no
// max_output_tokens), as pi sends it.
type CodexResponses struct {
	// HTTPClient sends the requests (nil: http.DefaultClient).
	HTTPClient *http.Client
	// Images fetches the image URLs the server is not handed.
	Images ai.ImageFetcher
	// Originator is the client name the backend sees (default "pi").
	Originator string
}

var _ ai.Provider = (*CodexResponses)(nil)

// NewCodexResponses returns a Codex provider using hc (nil:
// http.DefaultClient).
func NewCodexResponses(hc *http.Client) *CodexResponses { return &CodexResponses{HTTPClient: hc} }

func (p *CodexResponses) Stream(ctx context.Context, req *ai.Request, emit func(ai.AssistantEvent)) *ai.AssistantMessage {
	b := ai.NewBuilder(req.Model, req.ThinkingLevel, emit)
	b.Start()
	if ctx.Err() != nil {
		return b.Fail(ctx, ctx.Err())
	}
	account, err := codexAccountID(req.APIKey)
	if err != nil {
		return b.Fail(ctx, err)
	}
	req, err = inlineImages(ctx, p.Images, req)
	if err != nil {
		return b.Fail(ctx, err)
	}
	params := codexParams(req, resolveCompat(req.Model))
	originator := p.Originator
	if originator == "" {
		originator = "pi"
	}
	var raw *http.Response
	opts := clientOptions(p.HTTPClient, req, &raw)
	opts = append(opts,
		option.WithBaseURL(strings.TrimRight(baseURL(req.Model), "/")+"/codex/"),
		option.WithHeader("chatgpt-account-id", account),
		option.WithHeader("originator", originator),
		option.WithHeader("OpenAI-Beta", "responses=experimental"),
		option.WithHeader("Accept", "text/event-stream"),
	)
	if req.SessionID != "" {
		opts = append(opts, option.WithHeader("session-id", req.SessionID), option.WithHeader("x-client-request-id", req.SessionID))
	}
	svc := responses.NewResponseService(opts...)
	stream := svc.NewStreaming(ctx, params)
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return b.Fail(ctx, requestError(ctx, req.Model, raw, err))
	}
	if raw == nil || raw.Body == nil {
		return b.Fail(ctx, &ai.ProviderError{Message: "connection error: no response"})
	}
	return (&responsesReader{b: b, items: map[int64]*itemState{}}).read(ctx, raw)
}

// codexParams is the Responses body with the Codex backend's rules.
func codexParams(req *ai.Request, c compat) responses.ResponseNewParams {
	sys := req.SystemPrompt
	r := *req
	r.SystemPrompt = ""
	p := responsesParams(&r, c)
	if sys == "" {
		sys = "You are a helpful assistant."
	}
	p.Instructions = param.NewOpt(sys)
	p.MaxOutputTokens = param.Opt[int64]{}
	p.Text = responses.ResponseTextConfigParam{Verbosity: responses.ResponseTextConfigVerbosityLow}
	p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptionsAuto)}
	p.ParallelToolCalls = param.NewOpt(true)
	if req.Model.Reasoning && !thinkingOn(req) {
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort("none")}
	}
	return p
}

// codexAccountID reads the ChatGPT account id from the access token (a JWT
// whose claim "https://api.openai.com/auth" holds chatgpt_account_id).
func codexAccountID(token string) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) == 3 {
		if b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "=")); err == nil {
			var c struct {
				Auth struct {
					AccountID string `json:"chatgpt_account_id"`
				} `json:"https://api.openai.com/auth"`
			}
			if json.Unmarshal(b, &c) == nil && c.Auth.AccountID != "" {
				return c.Auth.AccountID, nil
			}
		}
	}
	return "", errors.New("openai-codex: the key is not a ChatGPT access token naming an account; log in with `pisces auth login openai-codex`")
}
