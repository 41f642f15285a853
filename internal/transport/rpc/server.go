// Package rpcmode is the stdio JSONL adapter of RPC mode: framing, the
// dispatch table onto the core, and the event fan-out to stdout.
package rpcmode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/rpc"
)

// Options configure a server.
type Options struct {
	// DeltaInterval merges deltas within this window (0 = never merge).
	DeltaInterval time.Duration
	// Legacy selects the older wire (--rpc-compat legacy).
	Legacy bool
	// Stderr receives diagnostics.
	Stderr io.Writer
	// OnReady, when set, runs in its own goroutine once the ready line is
	// queued (e.g. to ask the client something through the extension UI).
	OnReady func(*Server)
}

// Server speaks the protocol over one reader/writer pair.
type Server struct {
	sess *core.Session
	opts Options
	w    *writer
	ui   *uiBridge
	host *hostBridge
	wg   sync.WaitGroup
	// trustCtx bounds the trust questions of this connection (cancelled
	// when Serve ends: nobody is left to answer); trustWG counts them.
	trustCtx    context.Context
	trustCancel context.CancelFunc
	trustWG     sync.WaitGroup
	// cancellable counts running compact and navigate_tree commands:
	// abort answers after them, so a client sees the aborted command's
	// answer first.
	cancellable sync.WaitGroup
}

// New creates a server for sess that writes to out.
func New(sess *core.Session, out io.Writer, opts Options) *Server {
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	w := newWriter(out, opts.DeltaInterval, opts.Stderr)
	srv := &Server{sess: sess, opts: opts, w: w, ui: newUIBridge(w), host: newHostBridge(w)}
	srv.trustCtx, srv.trustCancel = context.WithCancel(context.Background())
	return srv
}

// resolveTrust decides trust for the session's current directory in the
// background, asking the client when nothing has decided it yet.
func (s *Server) resolveTrust() {
	dir := s.sess.Cwd()
	s.trustWG.Add(1)
	go func() {
		defer s.trustWG.Done()
		s.sess.ResolveTrustIn(s.trustCtx, dir)
	}()
}

// UI returns the extension UI of this connection (dialogs are answered by
// the client with extension_ui_response lines).
func (s *Server) UI() extensions.UI { return s.ui }

// Serve writes the ready line, then reads commands until in ends or stop is
// closed. Each command runs in its own goroutine (as pi does), so a long
// bash or compact does not hold up get_state; responses may come out of
// order and carry the request's id. Serve returns after every command has
// been answered and the output is flushed.
func (s *Server) Serve(in io.Reader, stop <-chan struct{}) error {
	unsub := s.sess.Subscribe(s.onEvent)
	s.w.event(&rpc.ReadyEvent{Type: rpc.EventReady})
	// The client is the person who decides project trust: an undecided
	// project is asked about right after ready (a yes reloads).
	s.sess.SetTrustAsk(s.AskTrust)
	s.resolveTrust()
	if s.opts.OnReady != nil {
		go s.opts.OnReady(s)
	}
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		readErr <- readLines(in, func(line []byte) bool {
			select {
			case lines <- line:
				return true
			case <-stop:
				return false
			}
		})
		close(lines)
	}()
	var err error
	eof := false
loop:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				err = <-readErr
				eof = true
				break loop
			}
			s.handleLine(line)
		case <-stop:
			break loop
		}
	}
	s.wg.Wait()
	// Nobody is left to answer a trust question still open (an answer
	// already read is kept and stored).
	s.sess.SetTrustAsk(nil)
	s.trustCancel()
	s.trustWG.Wait()
	if eof {
		// stdin ended: the running work finishes and is reported first.
		s.sess.WaitIdle()
	}
	unsub()
	s.w.close()
	return err
}

// Close waits for the output to drain.
func (s *Server) Close() { s.w.close() }

func (s *Server) onEvent(ev rpc.Event) {
	if s.opts.Legacy {
		ev = legacyEvent(ev)
		if ev == nil {
			return
		}
	}
	s.w.event(ev)
}

// readLines splits in on LF only, strips one trailing CR, and hands every
// non-empty line to fn. There is no line-length limit; a final line without
// LF is still handled.
func readLines(in io.Reader, fn func([]byte) bool) error {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimSuffix(line, []byte("\n"))
			line = bytes.TrimSuffix(line, []byte("\r"))
			if len(bytes.TrimSpace(line)) > 0 {
				if !fn(line) {
					return nil
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// handleLine parses one line and dispatches it.
func (s *Server) handleLine(line []byte) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		s.w.response(&rpc.Response{Command: "parse", Error: "Failed to parse command: " + err.Error()})
		return
	}
	if dec.More() {
		// Keep the id of a readable first object, so the client can match.
		id := ""
		if obj, ok := v.(map[string]any); ok {
			id, _ = idOf(obj)
		}
		s.w.response(&rpc.Response{ID: id, Command: "parse", Error: "Failed to parse command: unexpected data after the JSON object (one command per line)"})
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		s.w.response(&rpc.Response{Command: "parse", Error: fmt.Sprintf("Failed to parse command: expected a JSON object, got %s", jsonKind(v))})
		return
	}
	id, idErr := idOf(obj)
	typ, hasType := obj["type"]
	t, isString := typ.(string)
	switch {
	case idErr != nil:
		s.w.response(&rpc.Response{Command: strOr(t, "parse"), Error: idErr.Error()})
		return
	case !hasType:
		s.w.response(&rpc.Response{ID: id, Command: "parse", Error: `Missing field "type": expected a string naming the command`})
		return
	case !isString:
		s.w.response(&rpc.Response{ID: id, Command: "parse", Error: fmt.Sprintf(`Invalid field "type": expected a string, got %s`, jsonKind(typ))})
		return
	}
	if t == "host_tool_update" || t == "host_tool_result" {
		s.host.deliver(t, line)
		return
	}
	if t == rpc.TypeExtensionUIResponse {
		// Routed to the pending dialog; an unknown or late id is ignored
		// without a response, as pi does.
		s.ui.deliver(line)
		return
	}
	h, ok := handlers[t]
	if !ok {
		s.w.response(&rpc.Response{ID: id, Command: t, Error: "Unknown command: " + t})
		return
	}
	if err := checkFields(t, obj); err != nil {
		s.w.response(&rpc.Response{ID: id, Command: t, Error: err.Error()})
		return
	}
	if !slowCommands[t] {
		// Quick commands run in order on the reading goroutine, so that a
		// client sees their answers in the order it asked.
		if resp, body := s.run(h, t, id, line); resp != nil {
			s.w.respond(resp, body)
		}
		return
	}
	s.wg.Add(1)
	abortable := t == rpc.CmdCompact || t == rpc.CmdNavigateTree
	if abortable {
		s.cancellable.Add(1)
	}
	go func() {
		defer s.wg.Done()
		resp, body := s.run(h, t, id, line)
		if resp != nil {
			s.w.respond(resp, body)
		}
		if resp != nil && resp.Success && (t == rpc.CmdSwitchSession || t == rpc.CmdNewSession) {
			// The session may be in another project now: one nothing has
			// decided yet is asked about after the response.
			s.resolveTrust()
		}
		if abortable {
			s.cancellable.Done()
		}
	}()
}

// slowCommands may wait (for a run to stop, a shell command, a model call):
// they run concurrently, as pi runs every command, and their responses may
// overtake or follow others. Everything else answers at once, in order.
var slowCommands = map[string]bool{
	rpc.CmdAbort:              true,
	rpc.CmdAbortAndPrompt:     true,
	rpc.CmdAbortBranchSummary: true,
	rpc.CmdBash:               true,
	rpc.CmdNewSession:         true,
	rpc.CmdSwitchSession:      true,
	rpc.CmdFork:               true,
	rpc.CmdBranch:             true,
	rpc.CmdClone:              true,
	rpc.CmdCompact:            true,
	rpc.CmdNavigateTree:       true,
	rpc.CmdAbortBash:          true,
	rpc.CmdGetTree:            true,
	rpc.CmdGetSessionTree:     true,
	rpc.CmdListSessions:       true,
	rpc.CmdExportHTML:         true,
}

// streamedData is response data that writes itself out in pieces instead
// of being held in one buffer (list_sessions: megabytes of per-session
// fragments, kept encoded between calls).
type streamedData interface {
	json.Marshaler
	io.WriterTo
	SizeHint() int // about the length of the JSON
}

// run calls a handler, turning errors and panics into error responses. A
// handler's streamedData comes back as body (resp.Data is then empty).
func (s *Server) run(h handler, t, id string, line []byte) (resp *rpc.Response, body streamedData) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(s.opts.Stderr, "pisces: %s handler panicked: %v\n", t, p)
			resp, body = &rpc.Response{ID: id, Command: t, Error: fmt.Sprintf("Internal error while handling %s", t)}, nil
		}
	}()
	data, err := h(s, line)
	if err == errAnswered {
		return nil, nil
	}
	if err != nil {
		return &rpc.Response{ID: id, Command: t, Error: err.Error()}, nil
	}
	r := &rpc.Response{ID: id, Command: t, Success: true}
	if sd, ok := data.(streamedData); ok {
		return r, sd
	}
	if raw, ok := data.(json.RawMessage); ok {
		r.Data = raw // already encoded (large answers are written once)
	} else if data != nil {
		b, err := rpc.Marshal(data)
		if err != nil {
			return &rpc.Response{ID: id, Command: t, Error: "cannot encode the response: " + err.Error()}, nil
		}
		r.Data = b
	}
	return r, nil
}

func idOf(obj map[string]any) (string, error) {
	v, ok := obj["id"]
	if !ok || v == nil {
		return "", nil
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		// Echoed as a string would change its type; refuse clearly.
		return "", fmt.Errorf(`Invalid field "id": expected a string, got number`)
	default:
		return "", fmt.Errorf(`Invalid field "id": expected a string, got %s`, jsonKind(v))
	}
}

func strOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}
