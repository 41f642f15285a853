// Package scripted is a provider that replays a JSON script of model turns.
// It exists for tests and for client authors who need a deterministic agent;
// it is never selected unless asked for (--provider scripted --script FILE).
// The format is documented in docs/scripted-provider.md.
package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/fetch"
)

// API and provider name of the scripted provider.
const (
	API          = "scripted"
	ProviderName = "scripted"
)

// Script is a list of model turns and defaults for them.
type Script struct {
	Turns []Turn `json:"turns"`
	// ChunkSize splits text, thinking and argument JSON into deltas of this
	// many characters (0 = one delta per block).
	ChunkSize int `json:"chunkSize,omitempty"`
	// DelayMs waits this long before each delta.
	DelayMs int `json:"delayMs,omitempty"`
	// Model overrides fields of the model the provider reports.
	Model *ai.Model `json:"model,omitempty"`
	// RequestLog, when set, names a file to which every request is
	// appended as one JSON line (model, tool names, message count, last
	// user text): tests assert what the agent sent.
	RequestLog string `json:"requestLog,omitempty"`
	// FetchImages makes the provider fetch the image URLs of a request
	// before taking a turn, as a provider that is not handed URLs does; a
	// fetch that fails fails the request (and takes no turn).
	FetchImages bool `json:"fetchImages,omitempty"`
}

// Turn is one model response.
type Turn struct {
	Content    []Block    `json:"content,omitempty"`
	Error      *TurnError `json:"error,omitempty"`
	StopReason string     `json:"stopReason,omitempty"`
	Usage      *ai.Usage  `json:"usage,omitempty"`
	ChunkSize  *int       `json:"chunkSize,omitempty"`
	DelayMs    *int       `json:"delayMs,omitempty"`
	// Chunks, when set on a turn with a single text block, gives the exact
	// deltas (for tests of delta handling).
	Chunks []string `json:"chunks,omitempty"`
	// Hang makes the turn stream its content and then wait until the request
	// is cancelled (to test abort during streaming).
	Hang bool `json:"hang,omitempty"`
	// Match, when set, reserves the turn for a request whose system prompt
	// or last user message contains this text: concurrent conversations
	// (task subagents) each get their own turns. Requests take the first
	// unused turn that matches them, or else the first unused turn without
	// a match.
	Match string `json:"match,omitempty"`
}

// Block is one content block of a scripted turn.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Signature string          `json:"signature,omitempty"`
}

// TurnError makes a turn fail like a provider error.
type TurnError struct {
	Status       int    `json:"status,omitempty"`
	Message      string `json:"message"`
	RetryAfterMs int    `json:"retryAfterMs,omitempty"`
}

// Provider replays a script. It is safe for concurrent use; each request
// takes the next turn.
type Provider struct {
	// Images fetches image URLs when the script asks for it (nil:
	// fetch.Default()).
	Images ai.ImageFetcher

	mu     sync.Mutex
	script Script
	used   []bool
	calls  int
}

// Load reads a script file.
func Load(path string) (*Provider, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted provider: %w", err)
	}
	return Parse(b, path)
}

// Parse reads a script from JSON; name is used in error messages.
func Parse(b []byte, name string) (*Provider, error) {
	var s Script
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("scripted provider: %s: %w", name, err)
	}
	for i, t := range s.Turns {
		if t.Error == nil && len(t.Content) == 0 {
			return nil, fmt.Errorf("scripted provider: %s: turn %d has neither content nor error", name, i+1)
		}
		for j, b := range t.Content {
			switch b.Type {
			case ai.ContentText, ai.ContentThinking:
			case ai.ContentToolCall:
				if b.Name == "" {
					return nil, fmt.Errorf("scripted provider: %s: turn %d block %d: toolCall needs a name", name, i+1, j+1)
				}
			default:
				return nil, fmt.Errorf("scripted provider: %s: turn %d block %d: unknown type %q (text, thinking or toolCall)", name, i+1, j+1, b.Type)
			}
		}
	}
	return &Provider{script: s, used: make([]bool, len(s.Turns))}, nil
}

// Model returns the model the provider answers as.
func (p *Provider) Model() *ai.Model {
	m := &ai.Model{
		ID: "scripted", Name: "Scripted", API: API, Provider: ProviderName,
		Reasoning: true, Input: []string{"text", "image"},
		ContextWindow: 200000, MaxTokens: 16384,
	}
	if o := p.script.Model; o != nil {
		if o.ID != "" {
			m.ID = o.ID
		}
		if o.Name != "" {
			m.Name = o.Name
		}
		if o.ContextWindow != 0 {
			m.ContextWindow = o.ContextWindow
		}
		if o.MaxTokens != 0 {
			m.MaxTokens = o.MaxTokens
		}
		m.Reasoning = o.Reasoning || m.Reasoning
		m.Cost = o.Cost
	}
	return m
}

// Remaining returns how many turns are left.
func (p *Provider) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, u := range p.used {
		if !u {
			n++
		}
	}
	return n
}

// take reserves the turn for a request (see Turn.Match); -1 when none is
// left.
func (p *Provider) take(req *ai.Request) int {
	text := ""
	for _, t := range p.script.Turns {
		if t.Match != "" {
			// Only a script with matching turns reads the request's text.
			text = req.SystemPrompt + "\n" + lastUserText(req.Messages)
			break
		}
	}
	for i, t := range p.script.Turns {
		if !p.used[i] && t.Match != "" && strings.Contains(text, t.Match) {
			p.used[i] = true
			return i
		}
	}
	for i, t := range p.script.Turns {
		if !p.used[i] && t.Match == "" {
			p.used[i] = true
			return i
		}
	}
	return -1
}

func lastUserText(msgs []ai.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if u, ok := msgs[i].(*ai.UserMessage); ok {
			return u.Content.PlainText()
		}
	}
	return ""
}

// logRequest appends the request's summary to the request log.
func (p *Provider) logRequest(req *ai.Request, turn int) {
	if p.script.RequestLog == "" {
		return
	}
	names := make([]string, 0, len(req.Tools))
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	entry := map[string]any{
		"turn": turn + 1, "model": req.Model.ID, "thinkingLevel": req.ThinkingLevel,
		"tools": names, "messages": len(req.Messages), "lastUser": lastUserText(req.Messages),
	}
	if imgs := requestImages(req.Messages); len(imgs) > 0 {
		entry["images"] = imgs
	}
	line, _ := json.Marshal(entry)
	f, err := os.OpenFile(p.script.RequestLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	f.Write(append(line, '\n'))
	f.Close()
}

// requestImages describes the images of the user and tool-result messages
// as the request carries them: {url} for an image given by URL, {mimeType,
// bytes} for image data.
func requestImages(msgs []ai.Message) []map[string]any {
	var out []map[string]any
	for _, m := range msgs {
		var blocks []ai.Content
		switch v := m.(type) {
		case *ai.UserMessage:
			blocks = v.Content.AsBlocks()
		case *ai.ToolResultMessage:
			blocks = v.Content
		}
		for _, c := range blocks {
			switch {
			case c.IsImageURL():
				out = append(out, map[string]any{"url": c.URL})
			case c.Type == ai.ContentImage:
				out = append(out, map[string]any{"mimeType": c.MimeType, "bytes": decodedLen(c.Data)})
			}
		}
	}
	return out
}

// decodedLen is the number of bytes base64 text decodes to.
func decodedLen(b64 string) int {
	n := len(b64) / 4 * 3
	for i := len(b64) - 1; i >= 0 && i >= len(b64)-2 && b64[i] == '='; i-- {
		n--
	}
	return n
}

// Stream replays the next turn.
func (p *Provider) Stream(ctx context.Context, req *ai.Request, emit func(ai.AssistantEvent)) *ai.AssistantMessage {
	b := ai.NewBuilder(req.Model, req.ThinkingLevel, emit)
	if ctx.Err() != nil {
		b.Start()
		return b.Fail(ctx, ctx.Err())
	}
	if p.script.FetchImages {
		f := p.Images
		if f == nil {
			f = fetch.Default()
		}
		r, err := ai.InlineRequestImages(ctx, f, req)
		if err != nil {
			b.Start()
			return b.Fail(ctx, err)
		}
		req = r
	}
	p.mu.Lock()
	p.calls++
	call := p.calls
	n := p.take(req)
	var turn Turn
	if n >= 0 {
		turn = p.script.Turns[n]
	}
	p.logRequest(req, n)
	p.mu.Unlock()
	b.Start()
	if n < 0 {
		return b.Fail(ctx, fmt.Errorf("scripted provider: no turn left for request %d (the script has %d turns)", call, len(p.script.Turns)))
	}
	if turn.Error != nil {
		return b.Fail(ctx, &ai.ProviderError{
			Status:     turn.Error.Status,
			Message:    turn.Error.Message,
			RetryAfter: time.Duration(turn.Error.RetryAfterMs) * time.Millisecond,
		})
	}
	chunk := p.script.ChunkSize
	if turn.ChunkSize != nil {
		chunk = *turn.ChunkSize
	}
	delay := p.script.DelayMs
	if turn.DelayMs != nil {
		delay = *turn.DelayMs
	}
	wait := func() bool {
		if delay <= 0 {
			return ctx.Err() == nil
		}
		t := time.NewTimer(time.Duration(delay) * time.Millisecond)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	hasToolCall := false
	for bi, blk := range turn.Content {
		var idx int
		var text string
		switch blk.Type {
		case ai.ContentText:
			idx, text = b.BeginText(), blk.Text
		case ai.ContentThinking:
			idx, text = b.BeginThinking(), blk.Thinking
		case ai.ContentToolCall:
			hasToolCall = true
			id := blk.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", n+1, bi+1)
			}
			idx = b.BeginToolCall(id, blk.Name)
			text = string(blk.Arguments)
			if text == "" {
				text = "{}"
			}
		}
		var parts []string
		if len(turn.Chunks) > 0 && blk.Type == ai.ContentText && len(turn.Content) == 1 {
			parts = turn.Chunks
		} else {
			parts = split(text, chunk)
		}
		for _, part := range parts {
			if !wait() {
				return b.Fail(ctx, ctx.Err())
			}
			b.Delta(idx, part)
		}
		if blk.Signature != "" {
			b.SetSignature(idx, blk.Signature)
		}
		b.End(idx)
	}
	if turn.Hang {
		<-ctx.Done()
		return b.Fail(ctx, ctx.Err())
	}
	if turn.Usage != nil {
		b.SetUsage(*turn.Usage)
	}
	stop := turn.StopReason
	if stop == "" {
		stop = ai.StopStop
		if hasToolCall {
			stop = ai.StopToolUse
		}
	}
	return b.Done(stop)
}

// split cuts s into pieces of n characters (n <= 0: one piece).
func split(s string, n int) []string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return []string{s}
	}
	var out []string
	for len(s) > 0 {
		i, c := 0, 0
		for i < len(s) && c < n {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			c++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}
