package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/pisces-agent/pisces/internal/ai"
)

// Responses streams the Responses API (POST {baseUrl}/responses).
//
// Tool call ids are "call_id|item_id" so that results map back to the call
// and the function_call item can be replayed. A reasoning item is kept
// whole (with its encrypted_content, requested through include) as the
// thinking block's signature and sent back as it came; text blocks carry
// {"v":1,"id":<message item id>} as their signature.
type Responses struct {
	// HTTPClient sends the requests (nil: http.DefaultClient).
	HTTPClient *http.Client
	// Images fetches the image URLs the server is not handed (nil:
	// fetch.Default()); see passImageURLs.
	Images ai.ImageFetcher
}

// NewResponses returns a Responses API provider using hc (nil:
// http.DefaultClient).
func NewResponses(hc *http.Client) *Responses { return &Responses{HTTPClient: hc} }

var _ ai.Provider = (*Responses)(nil)

// Stream sends one request and maps the stream onto the builder's events.
func (p *Responses) Stream(ctx context.Context, req *ai.Request, emit func(ai.AssistantEvent)) *ai.AssistantMessage {
	b := ai.NewBuilder(req.Model, req.ThinkingLevel, emit)
	b.Start()
	if ctx.Err() != nil {
		return b.Fail(ctx, ctx.Err())
	}
	req, err := inlineImages(ctx, p.Images, req)
	if err != nil {
		return b.Fail(ctx, err)
	}
	params := responsesParams(req, resolveCompat(req.Model))
	if chatgptToken(req) {
		// A Sign in with ChatGPT token does not take a token limit.
		params.MaxOutputTokens = param.Opt[int64]{}
	}

	var raw *http.Response
	svc := responses.NewResponseService(clientOptions(p.HTTPClient, req, &raw)...)
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

// chatgptToken reports whether the key of an openai request is a Sign in
// with ChatGPT token (anything but an "sk-" API key), as pi decides.
func chatgptToken(req *ai.Request) bool {
	return req.Model.Provider == "openai" && req.APIKey != "" && !strings.HasPrefix(req.APIKey, "sk-")
}

// ---------------------------------------------------------------------------
// Request

// responsesFunction is a function tool of the Responses API, its members
// in the order the SDK writes them.
type responsesFunction struct {
	Strict      bool            `json:"strict"`
	Parameters  json.RawMessage `json:"parameters"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Type        string          `json:"type"`
}

func responsesParams(req *ai.Request, c compat) responses.ResponseNewParams {
	m := req.Model
	p := responses.ResponseNewParams{
		Model: shared.ResponsesModel(m.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responsesInput(req)},
		Store: param.NewOpt(false),
	}
	if n := maxTokens(req); n > 0 {
		p.MaxOutputTokens = param.NewOpt(n)
	}
	for _, t := range req.Tools {
		// The SDK's parameters field is a map, which would sort the
		// schema's keys: the tool is written as the SDK writes it, with
		// the schema as it is.
		fn := param.Override[responses.FunctionToolParam](responsesFunction{
			Strict: false, Parameters: toolSchema(t.Parameters), Name: t.Name, Description: t.Description, Type: "function",
		})
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &fn})
	}
	if req.SessionID != "" {
		p.PromptCacheKey = param.NewOpt(req.SessionID)
	}
	if req.Priority && ai.PriorityCapable(m) {
		p.ServiceTier = responses.ResponseNewParamsServiceTierPriority
	}
	if thinkingOn(req) {
		p.Reasoning = shared.ReasoningParam{
			Effort:  shared.ReasoningEffort(c.effort(req.ThinkingLevel)),
			Summary: shared.ReasoningSummaryAuto,
		}
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	return p
}

// textSignature is what a text block's signature holds: the id (and phase)
// of the output message item it came from.
type textSignature struct {
	V     int    `json:"v"`
	ID    string `json:"id"`
	Phase string `json:"phase,omitempty"`
}

func parseTextSignature(s string) (id, phase string) {
	if s == "" {
		return "", ""
	}
	if strings.HasPrefix(s, "{") {
		var t textSignature
		if json.Unmarshal([]byte(s), &t) == nil && t.V == 1 && t.ID != "" {
			return t.ID, t.Phase
		}
	}
	return s, ""
}

func shortHash(s string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 36)
}

// responsesCallID is the call_id part of a tool call id, as the API takes it.
func responsesCallID(id string) string {
	callID, _ := splitToolID(id)
	return strings.TrimRight(truncate(nonIDChars.Get().ReplaceAllString(callID, "_"), 64), "_")
}

func inputText(s string) responses.ResponseInputContentUnionParam {
	return responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: s}}
}

func inputImage(c ai.Content) responses.ResponseInputContentUnionParam {
	return responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
		Detail:   responses.ResponseInputImageDetailAuto,
		ImageURL: param.NewOpt(imageURL(c)),
	}}
}

func easyMessage(role responses.EasyInputMessageRole, content responses.EasyInputMessageContentUnionParam) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{Role: role, Content: content}}
}

// responsesInput converts the conversation into input items.
func responsesInput(req *ai.Request) responses.ResponseInputParam {
	m := req.Model
	var out responses.ResponseInputParam
	if req.SystemPrompt != "" {
		role := responses.EasyInputMessageRoleSystem
		if m.Reasoning {
			role = responses.EasyInputMessageRoleDeveloper
		}
		out = append(out, easyMessage(role, responses.EasyInputMessageContentUnionParam{OfString: param.NewOpt(req.SystemPrompt)}))
	}
	images := supportsImages(m)
	msgs := prepareMessages(req.Messages)
	for i := 0; i < len(msgs); i++ {
		pm := msgs[i]
		switch {
		case pm.user != nil:
			var parts responses.ResponseInputMessageContentListParam
			for _, c := range pm.user.Content.AsBlocks() {
				switch c.Type {
				case ai.ContentText:
					parts = append(parts, inputText(c.Text))
				case ai.ContentImage:
					if images {
						parts = append(parts, inputImage(c))
					}
				}
			}
			if len(parts) > 0 {
				out = append(out, easyMessage(responses.EasyInputMessageRoleUser,
					responses.EasyInputMessageContentUnionParam{OfInputItemContentList: parts}))
			}
		case pm.assistant != nil:
			out = append(out, responsesAssistant(pm.assistant, m)...)
		case pm.toolResult != nil:
			var imgs responses.ResponseInputMessageContentListParam
			for ; i < len(msgs) && msgs[i].toolResult != nil; i++ {
				tr := msgs[i].toolResult
				out = append(out, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
					CallID: param.NewOpt(responsesCallID(tr.ToolCallID)),
					Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: param.NewOpt(toolResultText(tr))},
				}})
				if images {
					for _, img := range toolResultImages(tr) {
						imgs = append(imgs, inputImage(img))
					}
				}
			}
			i--
			if len(imgs) > 0 {
				parts := append(responses.ResponseInputMessageContentListParam{inputText(toolImagesIntro)}, imgs...)
				out = append(out, easyMessage(responses.EasyInputMessageRoleUser,
					responses.EasyInputMessageContentUnionParam{OfInputItemContentList: parts}))
			}
		}
	}
	return out
}

func responsesAssistant(a *ai.AssistantMessage, m *ai.Model) []responses.ResponseInputItemUnionParam {
	var out []responses.ResponseInputItemUnionParam
	same := sameModel(a, m)
	sameVendor := a.Provider == m.Provider && a.API == m.API
	skippedThinking := false
	text := func(s, signature string) {
		id, phase := "", ""
		if sameVendor {
			id, phase = parseTextSignature(signature)
		}
		if id == "" {
			// No item of this API to refer to: a plain assistant message.
			out = append(out, easyMessage(responses.EasyInputMessageRoleAssistant,
				responses.EasyInputMessageContentUnionParam{OfString: param.NewOpt(s)}))
			return
		}
		if len(id) > 64 {
			id = "msg_" + shortHash(id)
		}
		msg := &responses.ResponseOutputMessageParam{
			ID: id,
			Content: []responses.ResponseOutputMessageContentUnionParam{{
				OfOutputText: &responses.ResponseOutputTextParam{Text: s, Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}},
			}},
			Status: responses.ResponseOutputMessageStatusCompleted,
		}
		if phase != "" {
			msg.Phase = responses.ResponseOutputMessagePhase(phase)
		}
		out = append(out, responses.ResponseInputItemUnionParam{OfOutputMessage: msg})
	}
	for _, blk := range a.Content {
		switch blk.Type {
		case ai.ContentThinking:
			switch {
			case same && strings.HasPrefix(blk.ThinkingSignature, "{") && json.Valid([]byte(blk.ThinkingSignature)):
				out = append(out, param.Override[responses.ResponseInputItemUnionParam](json.RawMessage(blk.ThinkingSignature)))
			case !same && !blk.Redacted && strings.TrimSpace(blk.Thinking) != "":
				// Another model's reasoning cannot be replayed; it goes
				// back as text.
				text(blk.Thinking, "")
			default:
				skippedThinking = true
			}
		case ai.ContentText:
			if blk.Text != "" {
				text(blk.Text, blk.TextSignature)
			}
		case ai.ContentToolCall:
			callID, itemID := splitToolID(blk.ID)
			fc := &responses.ResponseFunctionToolCallParam{
				CallID:    responsesCallID(callID),
				Name:      blk.Name,
				Arguments: argumentsJSON(blk),
			}
			// The API pairs fc_ items with the reasoning item before
			// them; without that item (another model, or reasoning not
			// kept) the id is left out.
			if same && !skippedThinking && strings.HasPrefix(itemID, "fc") {
				fc.ID = param.NewOpt(itemID)
			}
			out = append(out, responses.ResponseInputItemUnionParam{OfFunctionCall: fc})
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// Stream

type itemState struct {
	kind     string // reasoning, message, function_call
	block    int
	args     bool // function call arguments were streamed
	summary  bool // reasoning summary text was streamed
	ended    bool
	hasParts int // reasoning summary parts seen
}

type responsesReader struct {
	b        *ai.Builder
	items    map[int64]*itemState
	hasTools bool
}

func (r *responsesReader) read(ctx context.Context, raw *http.Response) *ai.AssistantMessage {
	dec := ssestream.NewDecoder(raw)
	if dec == nil {
		return r.b.Fail(ctx, &ai.ProviderError{Message: "connection error: no response body"})
	}
	defer dec.Close()
	for dec.Next() {
		if ctx.Err() != nil {
			return r.b.Fail(ctx, ctx.Err())
		}
		data := bytes.TrimSpace(dec.Event().Data)
		if len(data) == 0 || bytes.Equal(data, []byte("[DONE]")) {
			continue
		}
		var ev responses.ResponseStreamEventUnion
		if err := json.Unmarshal(data, &ev); err != nil {
			return r.b.Fail(ctx, &ai.ProviderError{Message: "invalid stream data: " + err.Error()})
		}
		if ev.Type == "" {
			// A bare {"error": ...} object, as some servers send.
			if err := streamErrorEvent(data); err != nil {
				return r.b.Fail(ctx, err)
			}
			continue
		}
		if msg, done := r.event(ctx, &ev, data); done {
			return msg
		}
	}
	if err := dec.Err(); err != nil {
		return r.b.Fail(ctx, streamReadError(ctx, err))
	}
	if ctx.Err() != nil {
		return r.b.Fail(ctx, ctx.Err())
	}
	return r.b.Fail(ctx, errStreamCut("response.completed"))
}

// event handles one stream event; done reports the end of the stream.
func (r *responsesReader) event(ctx context.Context, ev *responses.ResponseStreamEventUnion, data []byte) (*ai.AssistantMessage, bool) {
	switch ev.Type {
	case "response.created", "response.in_progress":
		if ev.Response.ID != "" {
			r.b.SetResponseID(ev.Response.ID)
		}
	case "response.output_item.added":
		r.itemAdded(ev)
	case "response.reasoning_summary_part.added":
		if st := r.item(ev, "reasoning"); st != nil {
			if st.hasParts > 0 {
				r.b.Delta(st.block, "\n\n")
			}
			st.hasParts++
		}
	case "response.reasoning_summary_text.delta":
		if st := r.item(ev, "reasoning"); st != nil && ev.Delta != "" {
			st.summary = true
			r.b.Delta(st.block, ev.Delta)
		}
	case "response.reasoning_text.delta":
		// Raw reasoning (gpt-oss behind vLLM, Ollama) when no summary comes.
		if st := r.item(ev, "reasoning"); st != nil && ev.Delta != "" && !st.summary {
			r.b.Delta(st.block, ev.Delta)
		}
	case "response.output_text.delta", "response.refusal.delta":
		if st := r.item(ev, "message"); st != nil && ev.Delta != "" {
			r.b.Delta(st.block, ev.Delta)
		}
	case "response.function_call_arguments.delta":
		if st := r.item(ev, "function_call"); st != nil && ev.Delta != "" {
			st.args = true
			r.b.Delta(st.block, ev.Delta)
		}
	case "response.function_call_arguments.done":
		if st := r.item(ev, "function_call"); st != nil && !st.args && ev.Arguments != "" {
			st.args = true
			r.b.Delta(st.block, ev.Arguments)
		}
	case "response.output_item.done":
		r.itemDone(ev)
	case "response.completed", "response.incomplete":
		return r.finish(ev), true
	case "response.failed", "response.cancelled":
		return r.b.Fail(ctx, failedError(ev)), true
	case "error":
		return r.b.Fail(ctx, eventError(ev.Code, ev.Message, data)), true
	}
	return nil, false
}

func (r *responsesReader) item(ev *responses.ResponseStreamEventUnion, kind string) *itemState {
	st := r.items[ev.OutputIndex]
	if st == nil || st.kind != kind || st.ended {
		return nil
	}
	return st
}

func (r *responsesReader) itemAdded(ev *responses.ResponseStreamEventUnion) {
	it := ev.Item
	st := &itemState{kind: it.Type}
	switch it.Type {
	case "reasoning":
		st.block = r.b.BeginThinking()
	case "message":
		st.block = r.b.BeginText()
	case "function_call":
		r.hasTools = true
		st.block = r.b.BeginToolCall(it.CallID+"|"+it.ID, it.Name)
		if a := it.Arguments.OfString; a != "" {
			st.args = true
			r.b.Delta(st.block, a)
		}
	default:
		return // built-in tools and other items are not shown
	}
	r.items[ev.OutputIndex] = st
}

func (r *responsesReader) itemDone(ev *responses.ResponseStreamEventUnion) {
	it := ev.Item
	st := r.items[ev.OutputIndex]
	if st == nil || st.kind != it.Type || st.ended {
		return
	}
	switch it.Type {
	case "reasoning":
		if !st.summary {
			// No deltas came: take the summary from the finished item.
			var parts []string
			for _, s := range it.Summary {
				parts = append(parts, s.Text)
			}
			if t := strings.Join(parts, "\n\n"); t != "" {
				r.b.Delta(st.block, t)
			}
		}
		if raw := it.RawJSON(); raw != "" {
			var buf bytes.Buffer
			if json.Compact(&buf, []byte(raw)) == nil {
				r.b.SetSignature(st.block, buf.String())
			}
		}
	case "message":
		if sig, err := json.Marshal(textSignature{V: 1, ID: it.ID, Phase: string(it.Phase)}); err == nil && it.ID != "" {
			r.b.SetSignature(st.block, string(sig))
		}
	case "function_call":
		if !st.args {
			if a := it.Arguments.OfString; a != "" {
				r.b.Delta(st.block, a)
			}
		}
	}
	st.ended = true
	r.b.End(st.block)
}

func (r *responsesReader) finish(ev *responses.ResponseStreamEventUnion) *ai.AssistantMessage {
	resp := ev.Response
	if resp.ID != "" {
		r.b.SetResponseID(resp.ID)
	}
	if resp.JSON.Usage.Valid() {
		u := resp.Usage
		cached := u.InputTokensDetails.CachedTokens
		input := u.InputTokens - cached
		if input < 0 {
			input = 0
		}
		r.b.SetUsage(ai.Usage{Input: input, Output: u.OutputTokens, CacheRead: cached})
	}
	status := string(resp.Status)
	if status == "" {
		status = strings.TrimPrefix(ev.Type, "response.")
	}
	r.b.SetRawStopReason(status)
	stop := ai.StopStop
	if status == "incomplete" {
		stop = ai.StopLength
	}
	if stop == ai.StopStop && r.hasTools {
		stop = ai.StopToolUse
	}
	return r.b.Done(stop)
}

// failedError is the error of a response.failed event.
func failedError(ev *responses.ResponseStreamEventUnion) error {
	e := ev.Response.Error
	if e.Message != "" || e.Code != "" {
		return codeError(string(e.Code), e.Message)
	}
	if reason := ev.Response.IncompleteDetails.Reason; reason != "" {
		return &ai.ProviderError{Message: "incomplete: " + reason}
	}
	if ev.Type == "response.cancelled" {
		return &ai.ProviderError{Message: "the response was cancelled"}
	}
	return &ai.ProviderError{Message: "the response failed (no error details)"}
}

// eventError is the error of an "error" event: {"type":"error","code",
// "message"}, or with the details nested under "error".
func eventError(code, message string, data []byte) error {
	if message == "" {
		var v struct {
			Error struct {
				Code    json.RawMessage `json:"code"`
				Type    string          `json:"type"`
				Message string          `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &v) == nil {
			message = v.Error.Message
			if code == "" {
				code = jsonText(v.Error.Code)
			}
			if code == "" {
				code = v.Error.Type
			}
		}
	}
	if message == "" {
		message = "unknown error in stream"
	}
	return codeError(code, message)
}

// codeError makes a ProviderError of an error code and message; codes that
// name an HTTP condition get its status, so the retry layer can tell
// transient failures from others.
func codeError(code, message string) *ai.ProviderError {
	pe := &ai.ProviderError{Message: message}
	if code != "" {
		pe.Message = code + ": " + message
	}
	switch {
	case code == "rate_limit_exceeded" || code == "rate_limit_error":
		pe.Status = 429
	case code == "server_error" || code == "internal_error" || code == "api_error":
		pe.Status = 500
	case code == "overloaded_error" || code == "server_overloaded" || code == "service_unavailable":
		pe.Status = 503
	default:
		if n, err := strconv.Atoi(code); err == nil && n >= 400 && n < 600 {
			pe.Status = n
		}
	}
	return pe
}
