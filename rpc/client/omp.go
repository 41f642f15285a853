package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/pisces-agent/pisces/rpc"
)

// oh-my-pi's wire (docs/rpc.md): NegotiateProtocol switches the connection
// to protocol v2; the client then reassembles rpc_chunk frames itself and
// PromptAndWait waits for the prompt's prompt_result.

// NegotiateProtocol asks for protocol v2, oh-my-pi's wire: prompts are then
// answered without data and reported with prompt_result, session_settled
// says the session is idle, and frames over 1 MiB arrive in pieces (put
// together by the client).
func (c *Client) NegotiateProtocol(ctx context.Context) (*rpc.ProtocolData, error) {
	id := c.newID()
	d, err := data[rpc.ProtocolData](c.do(ctx, rpc.CmdNegotiateProtocol, id, rpc.NegotiateProtocolCommand{ID: id, Type: rpc.CmdNegotiateProtocol, ProtocolVersion: rpc.ProtocolV2}))
	if err != nil {
		return nil, err
	}
	if d == nil || d.ProtocolVersion != rpc.ProtocolV2 {
		return nil, fmt.Errorf("pisces rpc: negotiate_protocol: the server did not switch to protocol %d", rpc.ProtocolV2)
	}
	c.omp.Store(true)
	return d, nil
}

// GetAvailableCommands lists the slash commands as oh-my-pi does.
func (c *Client) GetAvailableCommands(ctx context.Context) (*rpc.AvailableCommandsData, error) {
	return data[rpc.AvailableCommandsData](c.simple(ctx, rpc.CmdGetAvailableCommands))
}

// OpenSession continues the newest non-empty session of the session
// directory dir, or starts one there.
func (c *Client) OpenSession(ctx context.Context, dir string) (*rpc.OpenSessionData, error) {
	id := c.newID()
	return data[rpc.OpenSessionData](c.do(ctx, rpc.CmdOpenSession, id, rpc.OpenSessionCommand{ID: id, Type: rpc.CmdOpenSession, SessionDir: dir}))
}

// SetFastMode turns fast mode (the provider's priority processing) on or
// off; turning it on fails for a model without it.
func (c *Client) SetFastMode(ctx context.Context, enabled bool) (*rpc.FastModeData, error) {
	id := c.newID()
	return data[rpc.FastModeData](c.do(ctx, rpc.CmdSetFastMode, id, rpc.SetFastModeCommand{ID: id, Type: rpc.CmdSetFastMode, Enabled: enabled}))
}

// Handoff replaces the history before the kept recent messages with a
// handoff document the model writes (with customInstructions added).
func (c *Client) Handoff(ctx context.Context, customInstructions string) (*rpc.HandoffData, error) {
	id := c.newID()
	return data[rpc.HandoffData](c.do(ctx, rpc.CmdHandoff, id, rpc.HandoffCommand{ID: id, Type: rpc.CmdHandoff, CustomInstructions: customInstructions}))
}

// SetSubagentSubscription selects the subagent frames this connection
// gets: rpc.SubagentsOff or rpc.SubagentsProgress (subagent_lifecycle).
func (c *Client) SetSubagentSubscription(ctx context.Context, level string) (*rpc.SubagentSubscriptionData, error) {
	id := c.newID()
	return data[rpc.SubagentSubscriptionData](c.do(ctx, rpc.CmdSetSubagentSubscription, id, rpc.SetSubagentSubscriptionCommand{ID: id, Type: rpc.CmdSetSubagentSubscription, Level: level}))
}

// GetSubagents lists the task tool's subagents under way.
func (c *Client) GetSubagents(ctx context.Context) (*rpc.SubagentsData, error) {
	return data[rpc.SubagentsData](c.simple(ctx, rpc.CmdGetSubagents))
}

// SetEventFilter lets only the named session events through to this
// connection; nil lets every event through. It returns the selection in
// effect (nil: all).
func (c *Client) SetEventFilter(ctx context.Context, events []string) ([]string, error) {
	id := c.newID()
	cmd := rpc.SetEventFilterCommand{ID: id, Type: rpc.CmdSetEventFilter}
	if events != nil {
		cmd.Events = &events
	}
	d, err := data[rpc.EventFilterData](c.do(ctx, rpc.CmdSetEventFilter, id, cmd))
	if err != nil || d == nil || d.Events == nil {
		return nil, err
	}
	return *d.Events, nil
}

// GetMessagesPage returns one page of the context's messages: from cursor
// ("" for the first page), at most limit (0: the server's default of 100).
func (c *Client) GetMessagesPage(ctx context.Context, cursor string, limit int) (*rpc.MessagesPageData, error) {
	id := c.newID()
	cmd := rpc.GetMessagesPageCommand{ID: id, Type: rpc.CmdGetMessagesPage, Cursor: cursor}
	if limit != 0 {
		cmd.Limit = &limit
	}
	return data[rpc.MessagesPageData](c.do(ctx, rpc.CmdGetMessagesPage, id, cmd))
}

// GetMessagesPaged reads every page of the context's messages (256 at a
// time), checking that they belong to one state of the session.
func (c *Client) GetMessagesPaged(ctx context.Context) (rpc.Messages, error) {
	var out rpc.Messages
	cursor, total := "", -1
	seen := map[string]bool{}
	for {
		p, err := c.GetMessagesPage(ctx, cursor, 256)
		if err != nil {
			return nil, err
		}
		if p == nil || (total >= 0 && p.TotalMessages != total) {
			return nil, fmt.Errorf("pisces rpc: get_messages_page: inconsistent pages")
		}
		total = p.TotalMessages
		out = append(out, p.Messages...)
		if p.NextCursor == "" {
			break
		}
		if seen[p.NextCursor] {
			return nil, fmt.Errorf("pisces rpc: get_messages_page: a cursor came back twice")
		}
		seen[p.NextCursor] = true
		cursor = p.NextCursor
	}
	if len(out) != total {
		return nil, fmt.Errorf("pisces rpc: get_messages_page: %d messages of %d", len(out), total)
	}
	return out, nil
}

// chunkReader puts rpc_chunk lines back together.
type chunkReader struct {
	id     string
	count  int
	length int
	next   int
	buf    []byte
}

// add takes one rpc_chunk line; it returns the whole frame after its last
// piece, nil otherwise. A piece out of order drops the frame.
func (r *chunkReader) add(line []byte) []byte {
	var ch rpc.RPCChunkEvent
	if json.Unmarshal(line, &ch) != nil {
		r.reset()
		return nil
	}
	if ch.Index == 0 {
		r.reset()
		r.id, r.count, r.length = ch.ChunkID, ch.Count, ch.ByteLength
		if r.count < 2 || r.length <= 0 || r.length > rpc.MaxReassembledFrameBytes {
			r.reset()
			return nil
		}
		r.buf = make([]byte, 0, r.length)
	}
	if r.id == "" || ch.ChunkID != r.id || ch.Index != r.next || ch.Count != r.count || ch.ByteLength != r.length {
		r.reset()
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(ch.Data)
	if err != nil || len(r.buf)+len(b) > r.length {
		r.reset()
		return nil
	}
	r.buf = append(r.buf, b...)
	r.next++
	if r.next < r.count {
		return nil
	}
	whole, want := r.buf, r.length
	r.reset()
	if len(whole) != want {
		return nil
	}
	return whole
}

func (r *chunkReader) reset() { *r = chunkReader{} }
