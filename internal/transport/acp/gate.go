package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/tools"
)

// maxDiffBytes bounds the files whose edits are shown as diffs.
const maxDiffBytes = 1 << 20

// Permission option ids of session/request_permission.
const (
	optAllowOnce    = "allow-once"
	optAllowAlways  = "allow-always"
	optRejectOnce   = "reject-once"
	optRejectAlways = "reject-always"
)

// asks says whether a tool needs permission in the ask mode.
func asks(name string) bool { return name == "edit" || name == "write" || name == "bash" }

// GateTools wraps the tools of the session sessionID: in the ask mode the
// client is asked before edit, write and bash run; every call is marked
// in_progress when it really starts; edits and writes keep the file's
// text before and after, shown to the client as a diff.
func (s *Server) GateTools(sessionID string, ts []tools.Tool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = gatedTool{Tool: t, srv: s, sessionID: sessionID}
	}
	return out
}

type gatedTool struct {
	tools.Tool
	srv       *Server
	sessionID string
}

func (g gatedTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	as := g.srv.session(g.sessionID)
	if as == nil {
		return g.Tool.Execute(ctx, call)
	}
	name := g.Name()
	if ok, why := as.permit(ctx, name, call); !ok {
		return tools.ErrorResult(why), nil
	}
	path := ""
	var before *string
	if name == "edit" || name == "write" {
		var a struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(call.Args, &a) == nil && a.Path != "" {
			path = a.Path
			if !filepath.IsAbs(path) {
				path = filepath.Join(as.core.Cwd(), path)
			}
			path = filepath.Clean(path)
			if b, ok := as.readText(ctx, path); ok {
				before = &b
			}
		}
	}
	as.send(sdk.UpdateToolCall(sdk.ToolCallId(call.ID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)))
	res, err := g.Tool.Execute(ctx, call)
	if err == nil && !res.IsError && path != "" {
		if after, ok := as.readText(ctx, path); ok {
			var d sdk.ToolCallContent
			if before != nil {
				d = sdk.ToolDiffContent(path, after, *before)
			} else {
				d = sdk.ToolDiffContent(path, after)
			}
			as.mu.Lock()
			as.results[call.ID] = []sdk.ToolCallContent{d}
			as.mu.Unlock()
		}
	}
	return res, err
}

// readSmall reads a text file that is small enough to show as a diff.
func readSmall(path string) (string, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxDiffBytes {
		return "", false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// permit decides whether a tool call may run: in the ask mode the client
// is asked (session/request_permission naming the announced call), and an
// "always" answer holds for the rest of the session.
func (as *acpSession) permit(ctx context.Context, name string, call tools.Call) (bool, string) {
	if !asks(name) {
		return true, ""
	}
	as.mu.Lock()
	mode := as.mode
	decided, known := as.always[name]
	d, ok := as.toolInfo[call.ID]
	allowed := as.allowedCalls[call.ID]
	delete(as.allowedCalls, call.ID)
	as.mu.Unlock()
	if mode == ModeAuto || allowed {
		// Allowed already: the user answered an extension's question
		// about this very call.
		return true, ""
	}
	if known {
		if decided {
			return true, ""
		}
		return false, fmt.Sprintf("The user refused %s for this session.", name)
	}
	if !ok {
		d = describeTool(name, call.Args, as.core.Cwd())
	}
	var content []sdk.ToolCallContent
	if name == "write" {
		// The file as it would be, shown with the question.
		var a struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		}
		if json.Unmarshal(call.Args, &a) == nil && a.Path != "" && len(d.locations) == 1 {
			path := d.locations[0].Path
			if before, ok := as.readText(ctx, path); ok {
				content = []sdk.ToolCallContent{sdk.ToolDiffContent(path, a.Content, before)}
			} else {
				content = []sdk.ToolCallContent{sdk.ToolDiffContent(path, a.Content)}
			}
		}
	}
	switch as.askPermission(ctx, call.ID, d, call.Args, content, "Always allow "+name, "Always reject "+name) {
	case optAllowOnce:
		return true, ""
	case optAllowAlways:
		as.mu.Lock()
		as.always[name] = true
		as.mu.Unlock()
		return true, ""
	case optRejectAlways:
		as.mu.Lock()
		as.always[name] = false
		as.mu.Unlock()
	case optRejectOnce:
	default:
		return false, "The tool call was cancelled."
	}
	return false, "The user rejected this tool call."
}

// askPermission sends session/request_permission about the announced
// tool call id (described by d) and returns the option chosen: "" when
// the client cancelled, failed or the call ended first. content is shown
// with the question; always and never name the "always" options.
func (as *acpSession) askPermission(ctx context.Context, id string, d toolDesc, args json.RawMessage, content []sdk.ToolCallContent, always, never string) string {
	req := sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(as.id),
		ToolCall: sdk.ToolCallUpdate{
			ToolCallId: sdk.ToolCallId(id),
			Title:      sdk.Ptr(d.title),
			Kind:       sdk.Ptr(d.kind),
			Status:     sdk.Ptr(sdk.ToolCallStatusPending),
			Locations:  d.locations,
			RawInput:   rawJSON(args),
			Content:    content,
		},
		Options: []sdk.PermissionOption{
			{OptionId: optAllowOnce, Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: optAllowAlways, Name: always, Kind: sdk.PermissionOptionKindAllowAlways},
			{OptionId: optRejectOnce, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
			{OptionId: optRejectAlways, Name: never, Kind: sdk.PermissionOptionKindRejectAlways},
		},
	}
	type answer struct {
		resp sdk.RequestPermissionResponse
		err  error
	}
	ch := make(chan answer, 1)
	conn := as.srv.conn
	// Asked in the order of the updates: after the tool_call it names.
	as.q.push(func() {
		resp, err := conn.RequestPermission(ctx, req)
		ch <- answer{resp, err}
	})
	var a answer
	select {
	case a = <-ch:
	case <-ctx.Done():
		return ""
	case <-as.q.stopped:
		return ""
	}
	if a.err != nil || a.resp.Outcome.Selected == nil {
		return ""
	}
	switch o := string(a.resp.Outcome.Selected.OptionId); o {
	case optAllowOnce, optAllowAlways, optRejectOnce, optRejectAlways:
		return o
	}
	return ""
}
