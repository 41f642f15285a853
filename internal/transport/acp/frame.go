package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
)

// maxLine bounds one incoming message (images arrive inline as base64).
const maxLine = 64 << 20

// lineWriter writes whole JSON-RPC messages to stdout, one per Write,
// under one lock: the SDK's messages and the errors the filter answers
// itself never interleave. After a response carrying a result with a
// sessionId (session/new) it runs what was registered for that session
// (the first updates of a new session must follow its response).
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error

	hookMu sync.Mutex
	after  map[string]func()

	// Requests Pisces sends itself, past the SDK (elicitation/create:
	// the SDK's type lacks the sessionId the published schema requires).
	// Their ids start with ownIDPrefix; the filter hands their responses
	// here instead of to the SDK.
	callMu  sync.Mutex
	nextID  int
	calls   map[string]chan json.RawMessage
	stopped chan struct{} // closed when the connection ends
}

// ownIDPrefix starts the ids of the requests the lineWriter sends itself.
const ownIDPrefix = "pisces-"

// call sends a request and returns the raw response line (nil when ctx
// ended or the connection closed first).
func (lw *lineWriter) call(ctx context.Context, method string, params any) json.RawMessage {
	lw.callMu.Lock()
	lw.nextID++
	id := ownIDPrefix + strconv.Itoa(lw.nextID)
	if lw.calls == nil {
		lw.calls = map[string]chan json.RawMessage{}
	}
	ch := make(chan json.RawMessage, 1)
	lw.calls[id] = ch
	lw.callMu.Unlock()
	defer func() {
		lw.callMu.Lock()
		delete(lw.calls, id)
		lw.callMu.Unlock()
	}()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil
	}
	if _, err := lw.Write(append(b, '\n')); err != nil {
		return nil
	}
	select {
	case resp := <-ch:
		return resp
	case <-ctx.Done():
	case <-lw.stopped:
	}
	return nil
}

// deliver hands a response to its own request; false when line is not
// the response to one.
func (lw *lineWriter) deliver(m map[string]json.RawMessage, line []byte) bool {
	var id string
	if json.Unmarshal(m["id"], &id) != nil || !strings.HasPrefix(id, ownIDPrefix) {
		return false
	}
	lw.callMu.Lock()
	ch := lw.calls[id]
	lw.callMu.Unlock()
	if ch != nil {
		ch <- append(json.RawMessage(nil), line...)
	}
	return true
}

func (lw *lineWriter) Write(b []byte) (int, error) {
	lw.mu.Lock()
	if lw.err != nil {
		lw.mu.Unlock()
		return 0, lw.err
	}
	n, err := lw.w.Write(b)
	lw.err = err
	lw.mu.Unlock()
	if err == nil {
		lw.afterWrite(b)
	}
	return n, err
}

// afterResponse registers f to run once the response naming sessionID in
// its result has been written.
func (lw *lineWriter) afterResponse(sessionID string, f func()) {
	lw.hookMu.Lock()
	if lw.after == nil {
		lw.after = map[string]func(){}
	}
	lw.after[sessionID] = f
	lw.hookMu.Unlock()
}

func (lw *lineWriter) afterWrite(b []byte) {
	lw.hookMu.Lock()
	pending := len(lw.after)
	lw.hookMu.Unlock()
	if pending == 0 || !bytes.Contains(b, []byte(`"result"`)) {
		return
	}
	var msg struct {
		Method string `json:"method"`
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if json.Unmarshal(b, &msg) != nil || msg.Method != "" || msg.Result.SessionID == "" {
		return
	}
	lw.hookMu.Lock()
	f := lw.after[msg.Result.SessionID]
	delete(lw.after, msg.Result.SessionID)
	lw.hookMu.Unlock()
	if f != nil {
		f()
	}
}

// errorLine is a JSON-RPC error response with a null id.
func errorLine(code int, message, detail string) []byte {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": message, "data": map[string]string{"details": detail}},
	})
	return append(b, '\n')
}

// filter copies the messages of in that the SDK can handle to out and
// answers the others itself, as JSON-RPC 2.0 requires (the SDK logs them
// and answers nothing): a line that is not JSON gets -32700, a JSON value
// that is not a request, notification or response gets -32600, both with
// a null id. out is closed when in ends (or fails).
//
// seen, when set, looks at every valid message in the order of the input
// and returns true for one it handled itself (not passed on).
func filter(in io.Reader, out *io.PipeWriter, lw *lineWriter, seen func(line []byte) bool) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 {
			if reply := check(line); reply != nil {
				_, _ = lw.Write(reply)
			} else if m := ownResponse(line); m != nil && lw.deliver(m, line) {
				// the answer to a request Pisces sent itself
			} else if seen != nil && seen(line) {
				// handled in order (session/cancel)
			} else if _, werr := out.Write(append(line, '\n')); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				out.Close()
			} else {
				out.CloseWithError(err)
			}
			return
		}
	}
}

// readLine reads one line without its end; a line longer than maxLine is
// returned cut (it then fails to parse and is answered as such).
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) <= maxLine {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// ownResponse returns the members of a response whose id is a string
// with ownIDPrefix (nil for anything else).
func ownResponse(line []byte) map[string]json.RawMessage {
	if !bytes.Contains(line, []byte(ownIDPrefix)) {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	if _, ok := m["method"]; ok {
		return nil
	}
	return m
}

// check returns the error response for a line the SDK must not see, or
// nil.
func check(line []byte) []byte {
	if !json.Valid(line) {
		return errorLine(-32700, "Parse error", "the line is not valid JSON")
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return errorLine(-32600, "Invalid request", "a message must be a JSON object")
	}
	if v, ok := m["jsonrpc"]; !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		return errorLine(-32600, "Invalid request", `"jsonrpc" must be "2.0"`)
	}
	id, hasID := m["id"]
	if hasID && !validID(id) {
		return errorLine(-32600, "Invalid request", `"id" must be a string, a number or null`)
	}
	if method, ok := m["method"]; ok {
		var s string
		if json.Unmarshal(method, &s) != nil || s == "" {
			return errorLine(-32600, "Invalid request", `"method" must be a non-empty string`)
		}
		if p, ok := m["params"]; ok {
			if t := firstByte(p); t != '{' && t != '[' && t != 'n' {
				return errorLine(-32600, "Invalid request", `"params" must be an object or an array`)
			}
		}
		return nil
	}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if hasID && (hasResult || hasError) {
		return nil
	}
	return errorLine(-32600, "Invalid request", "a message needs a method (request, notification) or an id with a result or an error (response)")
}

func firstByte(raw json.RawMessage) byte {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return 0
	}
	return t[0]
}

func validID(raw json.RawMessage) bool {
	switch t := firstByte(raw); {
	case t == '"', t == 'n', t == '-', t >= '0' && t <= '9':
		return true
	}
	return false
}
