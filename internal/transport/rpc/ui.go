package rpcmode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/jsonx"
)

// uiBridge is the server side of the extension UI sub-protocol for one
// session: it sends extension_ui_request frames to every client attached
// to the session (and to a client that attaches while the request is
// open) and routes extension_ui_response frames back by id. The first
// answer wins; the other clients are told that the request is settled
// (method "cancel" with targetId, as omp and pi's web fork send).
// Timeouts are enforced here; a late or unknown reply is ignored.
type uiBridge struct {
	hub     *Hub
	mu      sync.Mutex
	pending map[string]*pendingDialog
}

type pendingDialog struct {
	ch  chan extensions.UIResponse
	raw []byte // the request, for clients that attach while it is open
}

var _ extensions.UI = (*uiBridge)(nil)

func newUIBridge(h *Hub) *uiBridge {
	return &uiBridge{hub: h, pending: map[string]*pendingDialog{}}
}

func newUIID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// paramOrder is pi's member order for the known UI methods' fields; other
// fields follow in sorted order.
var paramOrder = []string{"title", "message", "options", "placeholder", "prefill", "notifyType",
	"statusKey", "statusText", "widgetKey", "widgetLines", "widgetPlacement", "text", "url", "instructions", "timeout"}

// uiRequest encodes {type, id, method, ...params}.
func uiRequest(id, method string, params map[string]any) []byte {
	type envelope struct {
		Type   string `json:"type"`
		ID     string `json:"id"`
		Method string `json:"method"`
	}
	var extra jsonx.Extra
	for _, k := range orderedKeys(params) {
		extra = append(extra, jsonx.Field{Key: k, Value: jsonx.MustMarshal(params[k])})
	}
	b, err := jsonx.MarshalObject(envelope{"extension_ui_request", id, method}, extra)
	if err != nil {
		b, _ = jsonx.Marshal(envelope{"extension_ui_request", id, method})
	}
	return b
}

// Dialog sends a select/confirm/input/editor request and waits for the
// answer, the timeout or ctx. In a shared session, a dialog without a
// timeout of its own also ends once no client has been attached for the
// hub's Unattended period.
func (u *uiBridge) Dialog(ctx context.Context, method string, params map[string]any, timeout time.Duration) extensions.UIResponse {
	id := newUIID()
	ch := make(chan extensions.UIResponse, 1)
	if timeout > 0 {
		if params == nil {
			params = map[string]any{}
		}
		if _, ok := params["timeout"]; !ok {
			params["timeout"] = timeout.Milliseconds()
		}
	}
	raw := uiRequest(id, method, params)
	u.mu.Lock()
	u.pending[id] = &pendingDialog{ch: ch, raw: raw}
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		delete(u.pending, id)
		u.mu.Unlock()
	}()
	u.hub.broadcast(raw)
	var tc <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	unattended := timeout <= 0 && u.hub.opts.Shared
wait:
	for {
		var alone <-chan time.Time
		var changed <-chan struct{}
		var t *time.Timer
		if unattended {
			n, ch := u.hub.watch()
			changed = ch
			if n == 0 {
				t = time.NewTimer(u.hub.opts.Unattended)
				alone = t.C
			}
		}
		select {
		case r := <-ch:
			stopTimer(t)
			return r
		case <-tc:
		case <-ctx.Done():
		case <-alone:
		case <-changed:
			stopTimer(t)
			continue
		}
		stopTimer(t)
		break wait
	}
	// An answer that arrived together with the timeout or the cancellation
	// still counts.
	select {
	case r := <-ch:
		return r
	default:
		return extensions.UIResponse{Cancelled: true}
	}
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

// Notify sends a request that expects no answer to every attached client.
func (u *uiBridge) Notify(method string, params map[string]any) {
	u.hub.broadcast(uiRequest(newUIID(), method, params))
}

// Available is true: clients answer dialogs (one attached later can).
func (u *uiBridge) Available() bool { return true }

// pendingRequests returns the dialogs still waiting for an answer.
func (u *uiBridge) pendingRequests() [][]byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([][]byte, 0, len(u.pending))
	for _, p := range u.pending {
		out = append(out, p.raw)
	}
	return out
}

// deliver routes an extension_ui_response line from the client from to
// its pending dialog; the other clients are told the dialog is settled.
func (u *uiBridge) deliver(line []byte, from *Server) {
	var r struct {
		ID        string          `json:"id"`
		Value     *string         `json:"value"`
		Confirmed *bool           `json:"confirmed"`
		Cancelled bool            `json:"cancelled"`
		Raw       json.RawMessage `json:"-"`
	}
	if json.Unmarshal(line, &r) != nil {
		return
	}
	u.mu.Lock()
	p := u.pending[r.ID]
	delete(u.pending, r.ID)
	u.mu.Unlock()
	if p == nil {
		return
	}
	p.ch <- extensions.UIResponse{Value: r.Value, Confirmed: r.Confirmed, Cancelled: r.Cancelled}
	u.hub.others(from, func() []byte {
		return uiRequest(newUIID(), "cancel", map[string]any{"targetId": r.ID})
	})
}

func orderedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for _, k := range paramOrder {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	known := len(keys)
	for k := range m {
		if !slices.Contains(paramOrder, k) {
			keys = append(keys, k)
		}
	}
	rest := keys[known:]
	keys = keys[:known]
	slices.Sort(rest)
	return append(keys, rest...)
}
