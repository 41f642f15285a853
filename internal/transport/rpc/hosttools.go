package rpcmode

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// Host tools are tools the client executes (the pisces fork's
// set_host_tools): when the model calls one, Pisces writes host_tool_call
// and waits for host_tool_result (with optional host_tool_update progress);
// an abort writes host_tool_cancel.

type hostToolDef struct {
	Name        string          `json:"name"`
	Label       string          `json:"label,omitempty"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Hidden      bool            `json:"hidden,omitempty"`
	LoadMode    string          `json:"loadMode,omitempty"`
}

type hostReply struct {
	update  *tools.Result
	result  *tools.Result
	isError bool
}

// hostBridge sends a session's host tool calls to every client attached
// to it (and to one that attaches while the call is open); the first
// result wins and the other clients get host_tool_cancel.
type hostBridge struct {
	hub     *Hub
	mu      sync.Mutex
	pending map[string]*pendingCall
}

type pendingCall struct {
	ch  chan hostReply
	raw []byte // the host_tool_call frame
}

func newHostBridge(h *Hub) *hostBridge {
	return &hostBridge{hub: h, pending: map[string]*pendingCall{}}
}

// pendingRequests returns the calls still waiting for a result.
func (b *hostBridge) pendingRequests() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([][]byte, 0, len(b.pending))
	for _, p := range b.pending {
		out = append(out, p.raw)
	}
	return out
}

func hostCancel(id string) []byte {
	return jsonx.MustMarshal(struct {
		Type     string `json:"type"`
		ID       string `json:"id"`
		TargetID string `json:"targetId"`
	}{"host_tool_cancel", newUIID(), id})
}

type hostTool struct {
	def    hostToolDef
	bridge *hostBridge
}

func (t *hostTool) Name() string { return t.def.Name }
func (t *hostTool) Description() string {
	return t.def.Description
}
func (t *hostTool) Parameters() json.RawMessage {
	if len(t.def.Parameters) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return t.def.Parameters
}

// Execute asks the clients to run the tool and waits for its result.
func (t *hostTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	id := newUIID()
	ch := make(chan hostReply, 16)
	b := t.bridge
	args := call.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	raw := jsonx.MustMarshal(struct {
		Type       string          `json:"type"`
		ID         string          `json:"id"`
		ToolCallID string          `json:"toolCallId"`
		ToolName   string          `json:"toolName"`
		Arguments  json.RawMessage `json:"arguments"`
	}{"host_tool_call", id, call.ID, t.def.Name, args})
	b.mu.Lock()
	b.pending[id] = &pendingCall{ch: ch, raw: raw}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
	}()
	b.hub.broadcast(raw)
	for {
		select {
		case r := <-ch:
			if r.update != nil {
				if call.OnUpdate != nil {
					call.OnUpdate(*r.update)
				}
				continue
			}
			res := *r.result
			res.IsError = res.IsError || r.isError
			return res, nil
		case <-ctx.Done():
			b.hub.broadcast(hostCancel(id))
			return tools.ErrorResult("Tool execution aborted"), nil
		}
	}
}

// deliver routes host_tool_update / host_tool_result lines from the client
// from. Unknown ids are ignored (a reply after an abort, or after another
// client's result).
func (b *hostBridge) deliver(typ string, line []byte, from *Server) {
	var m struct {
		ID            string          `json:"id"`
		PartialResult json.RawMessage `json:"partialResult"`
		Result        json.RawMessage `json:"result"`
		IsError       bool            `json:"isError"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	b.mu.Lock()
	p := b.pending[m.ID]
	if p != nil && typ != "host_tool_update" {
		delete(b.pending, m.ID) // the first result wins
	}
	b.mu.Unlock()
	if p == nil {
		return
	}
	if typ == "host_tool_update" {
		r := toResult(m.PartialResult)
		select {
		case p.ch <- hostReply{update: &r}:
		default: // a slow tool drops progress, never the result
		}
		return
	}
	r := toResult(m.Result)
	p.ch <- hostReply{result: &r, isError: m.IsError}
	b.hub.others(from, func() []byte { return hostCancel(m.ID) })
}

// toResult reads a result given as {content, details?} or as plain text.
func toResult(raw json.RawMessage) tools.Result {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return tools.TextResult(s)
	}
	var v struct {
		Content []ai.Content    `json:"content"`
		Details json.RawMessage `json:"details"`
		IsError bool            `json:"isError"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.Content == nil {
		if len(raw) == 0 {
			return tools.TextResult("")
		}
		return tools.TextResult(string(raw))
	}
	return tools.Result{Content: v.Content, Details: v.Details, IsError: v.IsError}
}

func (s *call) setHostTools(line []byte) (any, error) {
	var c struct {
		Tools []hostToolDef `json:"tools"`
	}
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	var ts []tools.Tool
	names := []string{}
	discoverable := map[string]bool{}
	for i, d := range c.Tools {
		if d.Name == "" {
			return nil, fmt.Errorf(`Missing field "tools[%d].name": expected a string`, i)
		}
		switch d.LoadMode {
		case "", "essential":
		case "discoverable":
			discoverable[d.Name] = true
		default:
			return nil, fmt.Errorf(`Invalid field "tools[%d].loadMode": expected one of "essential", "discoverable", got %q`, i, d.LoadMode)
		}
		ts = append(ts, &hostTool{def: d, bridge: s.hub.host})
		names = append(names, d.Name)
	}
	if err := s.sess.SetHostTools(ts); err != nil {
		return nil, err
	}
	if len(discoverable) > 0 {
		// Registered (get_tools lists them) but not offered to the model
		// until set_active_tools turns them on.
		var active []string
		for _, n := range s.sess.ActiveToolNames() {
			if !discoverable[n] {
				active = append(active, n)
			}
		}
		if err := s.sess.SetActiveTools(active); err != nil {
			return nil, err
		}
	}
	return rpc.HostToolsData{ToolNames: names}, nil
}
