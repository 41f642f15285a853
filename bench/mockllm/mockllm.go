// Package mockllm is a local mock LLM server for benchmarks and tests. It
// streams OpenAI Chat Completions SSE (POST /v1/chat/completions) and
// Anthropic Messages SSE (POST /v1/messages) from a script of turns: text,
// thinking and tool calls split into a given number of deltas, with optional
// delays and failures (an HTTP error status, or a stream cut short).
//
// It listens on loopback only, every loop is bounded, and it shuts itself
// down after an idle period or a maximum lifetime, so a forgotten server
// cannot outlive a benchmark for long.
package mockllm

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// MaxChunks bounds the number of deltas of one block.
const MaxChunks = 1_000_000

// maxBody bounds the request body read (a long session's context).
const maxBody = 256 << 20

// Turn is one model response.
type Turn struct {
	// Thinking is streamed first, in ThinkingChunks deltas (0 = 1).
	Thinking       string `json:"thinking,omitempty"`
	ThinkingChunks int    `json:"thinkingChunks,omitempty"`
	// Text is streamed in TextChunks deltas (0 = 1). Deltas, when set,
	// gives the exact text deltas instead.
	Text       string   `json:"text,omitempty"`
	TextChunks int      `json:"textChunks,omitempty"`
	Deltas     []string `json:"deltas,omitempty"`
	// ToolCalls follow the text; each one's argument JSON is streamed in
	// ArgChunks deltas (0 = 1).
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`

	// DelayMs waits before every streamed event; FirstByteDelayMs before the
	// response headers.
	DelayMs          int `json:"delayMs,omitempty"`
	FirstByteDelayMs int `json:"firstByteDelayMs,omitempty"`

	// Status, when not 0 or 200, fails the request with this HTTP status and
	// an error body in the API's format carrying ErrorMessage.
	Status       int    `json:"status,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	RetryAfter   int    `json:"retryAfter,omitempty"` // seconds, sent as Retry-After
	// CutAfter, when > 0, drops the connection after this many SSE events
	// (no finish, no [DONE] / message_stop).
	CutAfter int `json:"cutAfter,omitempty"`

	// Usage reported at the end (defaults 100 in, 10 out).
	InputTokens  int `json:"inputTokens,omitempty"`
	OutputTokens int `json:"outputTokens,omitempty"`
}

// ToolCall is one tool call of a turn.
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON object text
	ArgChunks int    `json:"argChunks,omitempty"`
}

// Script chooses the turn for each request. By default the turn is picked
// from the request itself: the number of assistant messages after the last
// user prompt (so a tool result leads to the next turn, and every new prompt
// starts again at turn 0). Sequential takes the next turn per request
// instead (for retries after failures). The last turn repeats.
type Script struct {
	Turns      []Turn `json:"turns"`
	Sequential bool   `json:"sequential,omitempty"`
}

// Options configure a server.
type Options struct {
	// Addr to listen on; must be loopback. Default 127.0.0.1:0.
	Addr string
	// IdleTimeout shuts the server down when no request came for this long
	// (default 10 minutes).
	IdleTimeout time.Duration
	// MaxLifetime shuts it down regardless (default 2 hours).
	MaxLifetime time.Duration
}

// Server is a running mock.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
	once sync.Once

	mu       sync.Mutex
	script   Script
	next     int
	requests int
	last     time.Time
}

// Start listens and serves until Close (or the idle/lifetime limit).
func Start(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("mockllm: %s is not a loopback address", opts.Addr)
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 10 * time.Minute
	}
	if opts.MaxLifetime <= 0 {
		opts.MaxLifetime = 2 * time.Hour
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, done: make(chan struct{}), last: time.Now()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.openAI)
	mux.HandleFunc("POST /chat/completions", s.openAI)
	mux.HandleFunc("POST /v1/messages", s.anthropic)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	go s.watch(opts.IdleTimeout, opts.MaxLifetime)
	return s, nil
}

func (s *Server) watch(idle, life time.Duration) {
	start := time.Now()
	t := time.NewTicker(min(idle/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case now := <-t.C:
			s.mu.Lock()
			last := s.last
			s.mu.Unlock()
			if now.Sub(last) > idle || now.Sub(start) > life {
				s.Close()
				return
			}
		}
	}
}

// URL is the server's base URL (http://127.0.0.1:PORT).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// SetScript replaces the script and resets the sequential cursor.
func (s *Server) SetScript(sc Script) {
	s.mu.Lock()
	s.script = sc
	s.next = 0
	s.mu.Unlock()
}

// Requests returns how many requests were served.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Close stops the server and drops open connections.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// Done is closed when the server has stopped.
func (s *Server) Done() <-chan struct{} { return s.done }

// reqMessage is the part of a request message the turn choice needs.
type reqMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type request struct {
	Model    string       `json:"model"`
	Messages []reqMessage `json:"messages"`
}

// pick reads the request and returns the turn to play.
func (s *Server) pick(r *http.Request) (Turn, request, error) {
	var req request
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return Turn{}, req, err
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Turn{}, req, fmt.Errorf("bad request body: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	s.last = time.Now()
	if len(s.script.Turns) == 0 {
		return Turn{Text: "ok"}, req, nil
	}
	var i int
	if s.script.Sequential {
		i = s.next
		s.next++
	} else {
		i = turnIndex(req.Messages)
	}
	if i >= len(s.script.Turns) {
		i = len(s.script.Turns) - 1
	}
	return s.script.Turns[i], req, nil
}

// turnIndex counts the assistant messages after the last user prompt. An
// Anthropic user message made only of tool_result blocks is not a prompt.
func turnIndex(msgs []reqMessage) int {
	last := -1
	for i, m := range msgs {
		if m.Role == "user" && !onlyToolResults(m.Content) {
			last = i
		}
	}
	n := 0
	for _, m := range msgs[last+1:] {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

func onlyToolResults(c json.RawMessage) bool {
	var blocks []struct {
		Type string `json:"type"`
	}
	if len(c) == 0 || c[0] != '[' || json.Unmarshal(c, &blocks) != nil || len(blocks) == 0 {
		return false
	}
	for _, b := range blocks {
		if b.Type != "tool_result" {
			return false
		}
	}
	return true
}

// split cuts s into n pieces of nearly equal length (on rune boundaries),
// n clamped to [1, MaxChunks] and to the number of runes.
func split(s string, n int) []string {
	if n < 1 {
		n = 1
	}
	if n > MaxChunks {
		n = MaxChunks
	}
	runes := []rune(s)
	if n > len(runes) {
		n = max(len(runes), 1)
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		a, b := i*len(runes)/n, (i+1)*len(runes)/n
		out = append(out, string(runes[a:b]))
	}
	return out
}

func (t Turn) textDeltas() []string {
	if len(t.Deltas) > 0 {
		if len(t.Deltas) > MaxChunks {
			return t.Deltas[:MaxChunks]
		}
		return t.Deltas
	}
	if t.Text == "" {
		return nil
	}
	return split(t.Text, t.TextChunks)
}

func (t Turn) usage() (in, out int) {
	in, out = t.InputTokens, t.OutputTokens
	if in == 0 {
		in = 100
	}
	if out == 0 {
		out = 10
	}
	return
}

// sse writes events with the turn's delay and cut, flushing each one.
type sse struct {
	w     *bufio.Writer
	f     http.Flusher
	delay time.Duration
	cut   int
	n     int
	ctx   <-chan struct{}
}

var errCut = errors.New("cut")

func (e *sse) send(event string, data string) error {
	if e.cut > 0 && e.n >= e.cut {
		return errCut
	}
	if e.delay > 0 {
		select {
		case <-time.After(e.delay):
		case <-e.ctx:
			return errCut
		}
	}
	e.n++
	if event != "" {
		e.w.WriteString("event: ")
		e.w.WriteString(event)
		e.w.WriteByte('\n')
	}
	e.w.WriteString("data: ")
	e.w.WriteString(data)
	e.w.WriteString("\n\n")
	if err := e.w.Flush(); err != nil {
		return err
	}
	e.f.Flush()
	return nil
}

func start(w http.ResponseWriter, r *http.Request, t Turn) *sse {
	if t.FirstByteDelayMs > 0 {
		select {
		case <-time.After(time.Duration(t.FirstByteDelayMs) * time.Millisecond):
		case <-r.Context().Done():
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	if f == nil {
		f = nopFlusher{}
	}
	return &sse{w: bufio.NewWriterSize(w, 4096), f: f, delay: time.Duration(t.DelayMs) * time.Millisecond, cut: t.CutAfter, ctx: r.Context().Done()}
}

type nopFlusher struct{}

func (nopFlusher) Flush() {}

// finish ends a handler: a cut stream aborts the connection.
func finish(err error) {
	if err != nil {
		panic(http.ErrAbortHandler)
	}
}

func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func fail(w http.ResponseWriter, t Turn, body string) {
	w.Header().Set("Content-Type", "application/json")
	if t.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(t.RetryAfter))
	}
	w.WriteHeader(t.Status)
	io.WriteString(w, body)
}

func failed(t Turn) bool { return t.Status != 0 && t.Status != http.StatusOK }

func errMessage(t Turn) string {
	if t.ErrorMessage != "" {
		return t.ErrorMessage
	}
	return "mock failure " + strconv.Itoa(t.Status)
}

// openAI serves Chat Completions.
func (s *Server) openAI(w http.ResponseWriter, r *http.Request) {
	t, req, err := s.pick(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if failed(t) {
		fail(w, t, `{"error":{"message":`+q(errMessage(t))+`,"type":"mock_error","code":`+strconv.Itoa(t.Status)+`}}`)
		return
	}
	model := req.Model
	if model == "" {
		model = "mock-model"
	}
	head := `{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":` + strconv.FormatInt(time.Now().Unix(), 10) + `,"model":` + q(model) + `,"choices":[{"index":0,"delta":`
	tail := `,"finish_reason":null}]}`
	e := start(w, r, t)
	finish(func() error {
		if err := e.send("", head+`{"role":"assistant","content":""}`+tail); err != nil {
			return err
		}
		if t.Thinking != "" {
			for _, d := range split(t.Thinking, t.ThinkingChunks) {
				if err := e.send("", head+`{"reasoning_content":`+q(d)+`}`+tail); err != nil {
					return err
				}
			}
		}
		for _, d := range t.textDeltas() {
			if err := e.send("", head+`{"content":`+q(d)+`}`+tail); err != nil {
				return err
			}
		}
		for i, tc := range t.ToolCalls {
			id := tc.ID
			if id == "" {
				id = fmt.Sprintf("call_mock_%d", i)
			}
			idx := strconv.Itoa(i)
			if err := e.send("", head+`{"tool_calls":[{"index":`+idx+`,"id":`+q(id)+`,"type":"function","function":{"name":`+q(tc.Name)+`,"arguments":""}}]}`+tail); err != nil {
				return err
			}
			for _, d := range split(tc.Arguments, tc.ArgChunks) {
				if err := e.send("", head+`{"tool_calls":[{"index":`+idx+`,"function":{"arguments":`+q(d)+`}}]}`+tail); err != nil {
					return err
				}
			}
		}
		reason := `"stop"`
		if len(t.ToolCalls) > 0 {
			reason = `"tool_calls"`
		}
		if err := e.send("", head+`{}`+`,"finish_reason":`+reason+`}]}`); err != nil {
			return err
		}
		in, out := t.usage()
		if err := e.send("", `{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":`+q(model)+`,"choices":[],"usage":{"prompt_tokens":`+strconv.Itoa(in)+`,"completion_tokens":`+strconv.Itoa(out)+`,"total_tokens":`+strconv.Itoa(in+out)+`}}`); err != nil {
			return err
		}
		return e.send("", "[DONE]")
	}())
}

// anthropic serves Messages.
func (s *Server) anthropic(w http.ResponseWriter, r *http.Request) {
	t, req, err := s.pick(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if failed(t) {
		typ := "api_error"
		switch t.Status {
		case 429:
			typ = "rate_limit_error"
		case 529:
			typ = "overloaded_error"
		case 400:
			typ = "invalid_request_error"
		}
		fail(w, t, `{"type":"error","error":{"type":"`+typ+`","message":`+q(errMessage(t))+`}}`)
		return
	}
	model := req.Model
	if model == "" {
		model = "mock-model"
	}
	in, out := t.usage()
	e := start(w, r, t)
	finish(func() error {
		if err := e.send("message_start", `{"type":"message_start","message":{"id":"msg_mock","type":"message","role":"assistant","model":`+q(model)+`,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`+strconv.Itoa(in)+`,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`); err != nil {
			return err
		}
		index := 0
		block := func(startBlock string, deltas []string, deltaJSON func(string) string, extra []string) error {
			idx := strconv.Itoa(index)
			index++
			if err := e.send("content_block_start", `{"type":"content_block_start","index":`+idx+`,"content_block":`+startBlock+`}`); err != nil {
				return err
			}
			for _, d := range deltas {
				if err := e.send("content_block_delta", `{"type":"content_block_delta","index":`+idx+`,"delta":`+deltaJSON(d)+`}`); err != nil {
					return err
				}
			}
			for _, x := range extra {
				if err := e.send("content_block_delta", `{"type":"content_block_delta","index":`+idx+`,"delta":`+x+`}`); err != nil {
					return err
				}
			}
			return e.send("content_block_stop", `{"type":"content_block_stop","index":`+idx+`}`)
		}
		if t.Thinking != "" {
			if err := block(`{"type":"thinking","thinking":"","signature":""}`, split(t.Thinking, t.ThinkingChunks),
				func(d string) string { return `{"type":"thinking_delta","thinking":` + q(d) + `}` },
				[]string{`{"type":"signature_delta","signature":"mocksignature"}`}); err != nil {
				return err
			}
		}
		if ds := t.textDeltas(); len(ds) > 0 {
			if err := block(`{"type":"text","text":""}`, ds,
				func(d string) string { return `{"type":"text_delta","text":` + q(d) + `}` }, nil); err != nil {
				return err
			}
		}
		for i, tc := range t.ToolCalls {
			id := tc.ID
			if id == "" {
				id = fmt.Sprintf("toolu_mock_%d", i)
			}
			if err := block(`{"type":"tool_use","id":`+q(id)+`,"name":`+q(tc.Name)+`,"input":{}}`, split(tc.Arguments, tc.ArgChunks),
				func(d string) string { return `{"type":"input_json_delta","partial_json":` + q(d) + `}` }, nil); err != nil {
				return err
			}
		}
		reason := "end_turn"
		if len(t.ToolCalls) > 0 {
			reason = "tool_use"
		}
		if err := e.send("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+reason+`","stop_sequence":null},"usage":{"output_tokens":`+strconv.Itoa(out)+`}}`); err != nil {
			return err
		}
		return e.send("message_stop", `{"type":"message_stop"}`)
	}())
}

// ModelsJSON returns a models.json (pi's format) with one provider "mock"
// and one model "mock-model" pointing at this server; api is
// "openai-completions" or "anthropic-messages".
func (s *Server) ModelsJSON(api string) []byte {
	base := s.URL() + "/v1"
	if api == "anthropic-messages" {
		base = s.URL()
	}
	cfg := map[string]any{"providers": map[string]any{"mock": map[string]any{
		"baseUrl": base, "api": api, "apiKey": "mock-key",
		"models": []any{map[string]any{"id": "mock-model", "name": "Mock", "contextWindow": 128000, "maxTokens": 16384}},
	}}}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	return b
}
