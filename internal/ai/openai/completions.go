package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
)

// Completions streams the Chat Completions API (POST {baseUrl}/chat/completions),
// the API of OpenAI and of every OpenAI-compatible server.
type Completions struct {
	// HTTPClient sends the requests (nil: http.DefaultClient).
	HTTPClient *http.Client
	// Images fetches the image URLs the server is not handed (nil:
	// fetch.Default()); see passImageURLs.
	Images ai.ImageFetcher
}

// NewCompletions returns a Chat Completions provider using hc (nil:
// http.DefaultClient).
func NewCompletions(hc *http.Client) *Completions { return &Completions{HTTPClient: hc} }

var _ ai.Provider = (*Completions)(nil)

// Stream sends one request and maps the stream onto the builder's events.
func (p *Completions) Stream(ctx context.Context, req *ai.Request, emit func(ai.AssistantEvent)) *ai.AssistantMessage {
	b := ai.NewBuilder(req.Model, req.ThinkingLevel, emit)
	b.Start()
	if ctx.Err() != nil {
		return b.Fail(ctx, ctx.Err())
	}
	req, err := inlineImages(ctx, p.Images, req)
	if err != nil {
		return b.Fail(ctx, err)
	}
	c := resolveCompat(req.Model)
	bl := newBlobs()
	small, err := completionsParamsWith(req, c, bl).MarshalJSON()
	if err != nil {
		return b.Fail(ctx, err)
	}
	body, n, again := bl.body(small)
	raw, err := postBody(ctx, p.HTTPClient, req, "chat/completions", body, n, again)
	if err != nil || raw.StatusCode >= 400 {
		return b.Fail(ctx, requestError(ctx, req.Model, raw, err))
	}
	if raw.Body == nil {
		return b.Fail(ctx, &ai.ProviderError{Message: "connection error: no response"})
	}
	return (&completionsReader{b: b, tools: map[int64]*toolState{}}).read(ctx, raw)
}

// ---------------------------------------------------------------------------
// Request

// completionsParams builds the request body.
func completionsParams(req *ai.Request, c compat) *chatRequest {
	return completionsParamsWith(req, c, nil)
}

// completionsParamsWith builds the request body with the long strings of
// the conversation as placeholders in bl (nil: in the body).
func completionsParamsWith(req *ai.Request, c compat, bl *blobs) *chatRequest {
	m := req.Model
	p := &chatRequest{
		Model:    m.ID,
		Messages: completionsMessages(req, c, bl),
	}
	if c.supportsUsageInStreaming {
		p.StreamOptions = &chatStreamOptions{IncludeUsage: true}
	}
	if c.supportsStore {
		p.Store = new(false)
	}
	if n := maxTokens(req); n > 0 {
		if c.maxTokensField == "max_completion_tokens" {
			p.MaxCompletionTokens = n
		} else {
			p.MaxTokens = n
		}
	}
	if len(req.Tools) > 0 {
		for _, t := range req.Tools {
			fn := chatFunction{Name: t.Name, Description: t.Description, Parameters: toolSchema(t.Parameters)}
			if c.supportsStrictMode {
				fn.Strict = new(false)
			}
			p.Tools = append(p.Tools, chatTool{Function: fn, Type: "function"})
		}
	} else if hasToolHistory(req.Messages) {
		// Proxies in front of Anthropic (LiteLLM) need "tools" whenever the
		// conversation holds tool calls.
		p.EmptyTools = true
	}
	if c.isOpenAI && req.SessionID != "" {
		p.PromptCacheKey = req.SessionID
	}
	if req.Priority && ai.PriorityCapable(m) {
		p.ServiceTier = "priority"
	}

	on := thinkingOn(req)
	switch {
	case c.thinkingFormat == "zai" && m.Reasoning:
		p.Thinking = "disabled"
		if on {
			p.Thinking = "enabled"
		}
	case c.thinkingFormat == "qwen" && m.Reasoning:
		p.EnableThinking = new(on)
	case c.thinkingFormat == "qwen-chat-template" && m.Reasoning:
		p.ChatTemplateKwargs = &chatTemplateKwargs{EnableThinking: on}
	case c.thinkingFormat == "reasoning_effort" && on && c.supportsReasoningEffort:
		p.ReasoningEffort = c.effort(req.ThinkingLevel)
	}
	return p
}

func hasToolHistory(msgs []ai.Message) bool {
	for _, m := range msgs {
		switch v := m.(type) {
		case *ai.ToolResultMessage:
			return true
		case *ai.AssistantMessage:
			if len(v.ToolCalls()) > 0 {
				return true
			}
		}
	}
	return false
}

// reasoningFields are the delta members OpenAI-compatible servers stream
// reasoning in: reasoning_content (llama.cpp, DeepSeek, vLLM), reasoning
// (Ollama, OpenRouter, Groq), reasoning_text. The first non-empty one wins;
// its name is kept as the thinking signature so the text can be sent back
// under the same member.
var reasoningFields = []string{"reasoning_content", "reasoning", "reasoning_text"}

func isReasoningField(s string) bool {
	for _, f := range reasoningFields {
		if f == s {
			return true
		}
	}
	return false
}

// completionsToolID adapts a tool call id to what the server accepts.
func completionsToolID(id string, m *ai.Model, c compat) string {
	if c.requiresMistralToolIDs {
		// Mistral: exactly nine characters of [a-zA-Z0-9].
		s := nonIDChars.Get().ReplaceAllString(id, "")
		s = strings.ReplaceAll(strings.ReplaceAll(s, "_", ""), "-", "")
		if len(s) < 9 {
			s += "ABCDEFGHI"[:9-len(s)]
		}
		return s[:9]
	}
	if strings.Contains(id, "|") {
		// A Responses id "call_id|item_id": keep the call id, within
		// OpenAI's 40 characters.
		callID, _ := splitToolID(id)
		return truncate(nonIDChars.Get().ReplaceAllString(callID, "_"), 40)
	}
	if c.isOpenAI || m.Provider == "openai" {
		return truncate(id, 40)
	}
	return id
}

// completionsMessages converts the conversation.
func completionsMessages(req *ai.Request, c compat, bl *blobs) []chatMessage {
	m := req.Model
	var out []chatMessage
	if req.SystemPrompt != "" {
		role := "system"
		if c.supportsDeveloperRole && m.Reasoning {
			role = "developer"
		}
		out = append(out, chatMessage{Content: bl.str(req.SystemPrompt), Role: role})
	}
	images := supportsImages(m)
	bridge := func() {
		out = append(out, chatMessage{Content: "I have processed the tool results.", Role: "assistant"})
	}
	msgs := prepareMessages(req.Messages)
	lastWasTool := false
	for i := 0; i < len(msgs); i++ {
		pm := msgs[i]
		switch {
		case pm.user != nil:
			if c.requiresAssistantAfterToolResult && lastWasTool {
				bridge()
			}
			lastWasTool = false
			if u, ok := completionsUser(pm.user, images, bl); ok {
				out = append(out, u)
			}
		case pm.assistant != nil:
			lastWasTool = false
			if a, ok := completionsAssistant(pm.assistant, m, c, bl); ok {
				out = append(out, a)
			}
		case pm.toolResult != nil:
			// A run of tool results; their images follow in one user message.
			var imgs []any
			for ; i < len(msgs) && msgs[i].toolResult != nil; i++ {
				tr := msgs[i].toolResult
				tm := chatMessage{
					Content:    toolResultTextIn(tr, bl),
					ToolCallID: completionsToolID(tr.ToolCallID, m, c),
					Role:       "tool",
				}
				if c.requiresToolResultName && tr.ToolName != "" {
					tm.extraKey, tm.extraValue = "name", tr.ToolName
				}
				out = append(out, tm)
				if images {
					for _, img := range toolResultImages(tr) {
						imgs = append(imgs, imagePartIn(img, bl))
					}
				}
			}
			i--
			lastWasTool = true
			if len(imgs) > 0 {
				if c.requiresAssistantAfterToolResult {
					bridge()
				}
				parts := append([]any{textPart(toolImagesIntro)}, imgs...)
				out = append(out, chatMessage{Content: parts, Role: "user"})
				lastWasTool = false
			}
		}
	}
	return out
}

func completionsUser(u *ai.UserMessage, images bool, bl *blobs) (chatMessage, bool) {
	if u.Content.IsString {
		return chatMessage{Content: bl.str(u.Content.Str), Role: "user"}, true
	}
	var parts []any
	for _, c := range u.Content.Blocks {
		switch c.Type {
		case ai.ContentText:
			parts = append(parts, textPart(bl.str(c.Text)))
		case ai.ContentImage:
			if images {
				parts = append(parts, imagePartIn(c, bl))
			}
		}
	}
	if len(parts) == 0 {
		return chatMessage{}, false
	}
	return chatMessage{Content: parts, Role: "user"}, true
}

func completionsAssistant(a *ai.AssistantMessage, m *ai.Model, c compat, bl *blobs) (chatMessage, bool) {
	same := sameModel(a, m)
	var text, thinking []string
	reasoningField := ""
	for _, blk := range a.Content {
		switch blk.Type {
		case ai.ContentText:
			if strings.TrimSpace(blk.Text) != "" {
				text = append(text, blk.Text)
			}
		case ai.ContentThinking:
			if strings.TrimSpace(blk.Thinking) == "" || blk.Redacted {
				continue
			}
			switch {
			case !same || c.requiresThinkingAsText:
				// Another model's reasoning (or a server that only takes
				// text) goes back as plain text.
				thinking = append(thinking, blk.Thinking)
			case isReasoningField(blk.ThinkingSignature):
				if reasoningField == "" {
					reasoningField = blk.ThinkingSignature
				}
				thinking = append(thinking, blk.Thinking)
			}
		}
	}
	msg := chatMessage{Role: "assistant"}
	pieces := text
	if len(thinking) > 0 && reasoningField == "" {
		var joined []string
		for i, t := range thinking {
			if i > 0 {
				joined = append(joined, "\n\n")
			}
			joined = append(joined, t)
		}
		if len(text) > 0 {
			joined = append(joined, "\n\n")
		}
		pieces = append(joined, text...)
	}
	content := bl.join(pieces...)
	if content != "" || c.requiresAssistantAfterToolResult {
		msg.Content = content
	}
	for _, tc := range a.ToolCalls() {
		msg.ToolCalls = append(msg.ToolCalls, chatToolCall{
			ID:       completionsToolID(tc.ID, m, c),
			Function: chatCallFunction{Name: tc.Name, Arguments: bl.str(argumentsJSON(tc))},
			Type:     "function",
		})
	}
	if content == "" && len(msg.ToolCalls) == 0 {
		return chatMessage{}, false
	}
	if reasoningField != "" {
		msg.extraKey, msg.extraValue = reasoningField, bl.joinWith(thinking, "\n")
	}
	return msg, true
}

// ---------------------------------------------------------------------------
// Stream

type toolState struct {
	block int
	open  bool
	id    string
	args  strings.Builder // all argument text, also what came after End
	late  bool            // arguments arrived after the block was closed
}

type completionsReader struct {
	b        *ai.Builder
	cur      int    // open text or thinking block, -1 none
	curType  string // its type
	tools    map[int64]*toolState
	order    []*toolState
	lastTool *toolState
	finish   string
	idSet    bool
	data     chunkData // the current chunk (reused)
}

func (r *completionsReader) read(ctx context.Context, raw *http.Response) *ai.AssistantMessage {
	r.cur = -1
	if raw.Body == nil {
		return r.b.Fail(ctx, &ai.ProviderError{Message: "connection error: no response body"})
	}
	defer raw.Body.Close()
	dec := newSSEReader(raw.Body)
	sawDone := false
	for dec.next() {
		if ctx.Err() != nil {
			return r.b.Fail(ctx, ctx.Err())
		}
		data := bytes.TrimSpace(dec.data)
		if len(data) == 0 {
			continue
		}
		if bytes.Equal(data, []byte("[DONE]")) {
			sawDone = true
			break
		}
		// The fast decoder declines a chunk with a top-level "error"
		// member, so a chunk it takes is not an error event.
		if decodeChunk(data, !r.idSet, &r.data) {
			r.chunk(&r.data)
			continue
		}
		if err := streamErrorEvent(data); err != nil {
			return r.b.Fail(ctx, err)
		}
		if err := decodeChunkData(data, !r.idSet, &r.data); err != nil {
			return r.b.Fail(ctx, &ai.ProviderError{Message: "invalid stream data: " + err.Error()})
		}
		r.chunk(&r.data)
	}
	if err := dec.err; err != nil {
		return r.b.Fail(ctx, streamReadError(ctx, err))
	}
	if ctx.Err() != nil {
		return r.b.Fail(ctx, ctx.Err())
	}
	if !sawDone && r.finish == "" {
		return r.b.Fail(ctx, errStreamCut("[DONE]"))
	}
	r.patchLateArguments()
	if r.finish != "" {
		r.b.SetRawStopReason(r.finish)
	}
	stop := ai.StopStop
	switch r.finish {
	case "length":
		stop = ai.StopLength
	case "tool_calls", "function_call":
		stop = ai.StopToolUse
	case "content_filter":
		return r.b.Fail(ctx, errors.New("the provider stopped the response: content_filter"))
	}
	if stop == ai.StopStop && len(r.order) > 0 {
		// Some servers (older Ollama, llama.cpp) say "stop" after tool calls.
		stop = ai.StopToolUse
	}
	return r.b.Done(stop)
}

// streamErrorEvent reports an {"error": ...} object sent inside the stream.
func streamErrorEvent(data []byte) error {
	if !bytes.Contains(data, []byte(`"error"`)) {
		return nil
	}
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &v) != nil || len(v.Error) == 0 || string(v.Error) == "null" {
		return nil
	}
	pe := &ai.ProviderError{Message: errorMessage(data)}
	var obj struct {
		Code json.RawMessage `json:"code"`
	}
	if json.Unmarshal(v.Error, &obj) == nil {
		if n, err := strconv.Atoi(strings.Trim(string(obj.Code), `"`)); err == nil && n >= 400 && n < 600 {
			pe.Status = n
		}
	}
	if pe.Message == "" {
		pe.Message = "unknown error in stream"
	}
	return pe
}

func (r *completionsReader) chunk(ch *chunkData) {
	if !r.idSet && ch.id != "" {
		r.b.SetResponseID(ch.id)
		r.idSet = true
	}
	if ch.hasUsage {
		r.usage(ch.usage)
	}
	if !ch.hasChoice {
		return
	}
	if ch.content != "" {
		r.openKind(ai.ContentText, "")
		r.b.Delta(r.cur, ch.content)
	}
	if ch.refusal != "" {
		// A refusal is the answer's text.
		r.openKind(ai.ContentText, "")
		r.b.Delta(r.cur, ch.refusal)
	}
	if ch.reasoningText != "" {
		r.openKind(ai.ContentThinking, ch.reasoningField)
		r.b.Delta(r.cur, ch.reasoningText)
	}
	for i := range ch.toolCalls {
		r.toolDelta(&ch.toolCalls[i])
	}
	if ch.finish != "" {
		r.finish = ch.finish
	}
}

// openKind makes sure a text or thinking block is open, closing others.
func (r *completionsReader) openKind(kind, signature string) {
	if r.cur >= 0 && r.curType == kind {
		return
	}
	r.closeCur()
	r.closeTool()
	if kind == ai.ContentText {
		r.cur = r.b.BeginText()
	} else {
		r.cur = r.b.BeginThinking()
		if signature != "" {
			r.b.SetSignature(r.cur, signature)
		}
	}
	r.curType = kind
}

func (r *completionsReader) closeCur() {
	if r.cur >= 0 {
		r.b.End(r.cur)
		r.cur = -1
		r.curType = ""
	}
}

func (r *completionsReader) closeTool() {
	if r.lastTool != nil && r.lastTool.open {
		r.b.End(r.lastTool.block)
		r.lastTool.open = false
	}
}

func (r *completionsReader) toolDelta(tc *toolCallData) {
	idx := tc.index
	st := r.tools[idx]
	if st != nil && tc.id != "" && st.id != "" && tc.id != st.id {
		// A server that reuses index 0 for every call: a new id is a new call.
		st = nil
	}
	if st == nil {
		r.closeCur()
		r.closeTool()
		st = &toolState{id: tc.id, open: true}
		st.block = r.b.BeginToolCall(tc.id, tc.name)
		r.tools[idx] = st
		r.order = append(r.order, st)
		r.lastTool = st
	} else {
		msg := r.b.Message()
		if tc.id != "" && st.id == "" {
			st.id = tc.id
			msg.Content[st.block].ID = tc.id
		}
		if tc.name != "" && msg.Content[st.block].Name == "" {
			msg.Content[st.block].Name = tc.name
		}
	}
	if a := tc.args; a != "" {
		st.args.WriteString(a)
		if st.open {
			r.b.Delta(st.block, a)
		} else {
			st.late = true
		}
	}
}

// patchLateArguments sets the arguments of tool calls whose argument text
// kept coming after their block was closed (servers that interleave calls).
func (r *completionsReader) patchLateArguments() {
	msg := r.b.Message()
	for _, st := range r.order {
		if !st.late {
			continue
		}
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(st.args.String())) == nil && bytes.HasPrefix(buf.Bytes(), []byte("{")) {
			msg.Content[st.block].Arguments = json.RawMessage(buf.Bytes())
			msg.Content[st.block].ArgumentsError = ""
		}
	}
}

func (r *completionsReader) usage(u usageData) {
	cached := u.cached
	if cached == 0 && u.cacheHit != "" {
		// DeepSeek reports prompt_cache_hit_tokens.
		cached, _ = strconv.ParseInt(u.cacheHit, 10, 64)
	}
	write := u.cacheWrite
	input := u.prompt - cached - write
	if input < 0 {
		input = 0
	}
	r.b.SetUsage(ai.Usage{Input: input, Output: u.completion, CacheRead: cached, CacheWrite: write})
}
