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

// uiBridge is the server side of the extension UI sub-protocol: it writes
// extension_ui_request lines and routes extension_ui_response lines back
// by id. Timeouts are enforced here; a late or unknown reply is ignored.
type uiBridge struct {
	w       *writer
	mu      sync.Mutex
	pending map[string]chan extensions.UIResponse
}

var _ extensions.UI = (*uiBridge)(nil)

func newUIBridge(w *writer) *uiBridge {
	return &uiBridge{w: w, pending: map[string]chan extensions.UIResponse{}}
}

func newUIID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// paramOrder is pi's member order for the known UI methods' fields; other
// fields follow in sorted order.
var paramOrder = []string{"title", "message", "options", "placeholder", "prefill", "notifyType",
	"statusKey", "statusText", "widgetKey", "widgetLines", "widgetPlacement", "text", "timeout"}

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
// answer, the timeout or ctx.
func (u *uiBridge) Dialog(ctx context.Context, method string, params map[string]any, timeout time.Duration) extensions.UIResponse {
	id := newUIID()
	ch := make(chan extensions.UIResponse, 1)
	u.mu.Lock()
	u.pending[id] = ch
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		delete(u.pending, id)
		u.mu.Unlock()
	}()
	if timeout > 0 {
		if params == nil {
			params = map[string]any{}
		}
		if _, ok := params["timeout"]; !ok {
			params["timeout"] = timeout.Milliseconds()
		}
	}
	u.w.raw(uiRequest(id, method, params))
	var tc <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	select {
	case r := <-ch:
		return r
	case <-tc:
	case <-ctx.Done():
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

// Notify sends a request that expects no answer.
func (u *uiBridge) Notify(method string, params map[string]any) {
	u.w.raw(uiRequest(newUIID(), method, params))
}

// Available is true: an RPC client is attached.
func (u *uiBridge) Available() bool { return true }

// deliver routes an extension_ui_response line to its pending dialog.
func (u *uiBridge) deliver(line []byte) {
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
	ch := u.pending[r.ID]
	delete(u.pending, r.ID)
	u.mu.Unlock()
	if ch != nil {
		ch <- extensions.UIResponse{Value: r.Value, Confirmed: r.Confirmed, Cancelled: r.Cancelled}
	}
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
