package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/extensions"
)

// extensionUI is the extension UI of one session in ACP mode. The
// questions of extensions (select, confirm, input, editor) become form
// elicitations (elicitation/create) when the client advertised
// elicitation.form; otherwise they resolve as cancelled, and the
// conversation gets a one-line note saying so. An extension's notify
// message is shown as a note too; status, widget and title changes have
// no place in ACP and are dropped.
type extensionUI struct{ as *acpSession }

var _ extensions.UI = extensionUI{}

func (u extensionUI) Dialog(ctx context.Context, method string, params map[string]any, timeout time.Duration) extensions.UIResponse {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if ref, ok := extensions.ToolCallOf(ctx); ok && method == "confirm" {
		return u.as.confirmToolCall(ctx, ref, params)
	}
	if el := u.as.srv.clientCaps().Elicitation; el != nil && el.Form != nil {
		return u.as.elicit(ctx, method, params)
	}
	what, _ := params["title"].(string)
	if what == "" {
		what, _ = params["message"].(string)
	}
	if what == "" {
		what = method
	}
	u.as.note(fmt.Sprintf("An extension asked %q (%s); this editor cannot answer extension questions, so it was cancelled.", oneLine(what, 100), method))
	return extensions.UIResponse{Cancelled: true}
}

func (u extensionUI) Notify(method string, params map[string]any) {
	if method != "notify" {
		return
	}
	if msg, _ := params["message"].(string); msg != "" {
		u.as.note(oneLine(msg, 300))
	}
}

func (u extensionUI) Available() bool { return true }

// note shows a one-line note in the conversation, as an agent message.
func (as *acpSession) note(text string) {
	as.send(sdk.UpdateAgentMessageText("\n\n> " + text + "\n\n"))
}

// announce sends what a client learns about a session it opened: the
// commands, and a note when the project's own resources are not loaded
// because nobody decided to trust it.
func (as *acpSession) announce() {
	as.announceCommands()
	if as.srv.opts.TrustNote != nil {
		if n := as.srv.opts.TrustNote(as.core.Cwd()); n != "" {
			as.note(n)
		}
	}
}

// elicitRequest is elicitation/create in form mode, scoped to a session
// (the published schema's shape; the SDK's type has no sessionId).
type elicitRequest struct {
	SessionID       string         `json:"sessionId"`
	Mode            string         `json:"mode"`
	Message         string         `json:"message"`
	RequestedSchema map[string]any `json:"requestedSchema"`
}

// elicit asks an extension's question as a form: confirm as a boolean
// "confirmed", select as a string "choice" among the options, input and
// editor as a string "value". Decline, cancel, an error or no answer is a
// cancelled dialog.
func (as *acpSession) elicit(ctx context.Context, method string, params map[string]any) extensions.UIResponse {
	title, _ := params["title"].(string)
	message, _ := params["message"].(string)
	text := title
	if message != "" {
		if text != "" {
			text += "\n\n"
		}
		text += message
	}
	var field string
	prop := map[string]any{"title": title}
	switch method {
	case "confirm":
		field = "confirmed"
		prop["type"] = "boolean"
		prop["default"] = false
	case "select":
		field = "choice"
		prop["type"] = "string"
		var opts []string
		switch list := params["options"].(type) {
		case []string: // a built-in extension's
			opts = list
		case []any: // a process extension's, from JSON
			for _, o := range list {
				if s, ok := o.(string); ok {
					opts = append(opts, s)
				}
			}
		}
		prop["enum"] = opts
	default: // input, editor
		field = "value"
		prop["type"] = "string"
		if p, ok := params["placeholder"].(string); ok && p != "" {
			prop["description"] = p
		}
		if p, ok := params["prefill"].(string); ok && p != "" {
			prop["default"] = p
		}
	}
	if text == "" {
		text = "An extension asks for an answer (" + method + ")"
	}
	resp := as.srv.lw.call(ctx, "elicitation/create", elicitRequest{
		SessionID: as.id, Mode: "form", Message: text,
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{field: prop}, "required": []string{field}},
	})
	var r struct {
		Result *struct {
			Action  string         `json:"action"`
			Content map[string]any `json:"content"`
		} `json:"result"`
	}
	if resp == nil || json.Unmarshal(resp, &r) != nil || r.Result == nil || r.Result.Action != "accept" {
		return extensions.UIResponse{Cancelled: true}
	}
	switch v := r.Result.Content[field].(type) {
	case bool:
		if method == "confirm" {
			return extensions.UIResponse{Confirmed: &v}
		}
	case string:
		if method != "confirm" {
			return extensions.UIResponse{Value: &v}
		}
	}
	return extensions.UIResponse{Cancelled: true}
}

// confirmToolCall asks an extension's confirm about a tool call (its
// tool_call hook asks) as session/request_permission naming the announced
// call, the question shown as its content: allow is a yes, reject a no,
// and an "always" answer holds for the same question about the same tool
// for the rest of the session. An allowed call is not asked about again
// in the ask mode. A cancelled request is a cancelled dialog.
func (as *acpSession) confirmToolCall(ctx context.Context, ref extensions.ToolCallRef, params map[string]any) extensions.UIResponse {
	title, _ := params["title"].(string)
	message, _ := params["message"].(string)
	key := [2]string{ref.Name, title}
	yes, no := true, false
	as.mu.Lock()
	decided, known := as.extAlways[key]
	d, ok := as.toolInfo[ref.ID]
	if known && decided {
		as.allowedCalls[ref.ID] = true
	}
	as.mu.Unlock()
	if known {
		return extensions.UIResponse{Confirmed: &decided}
	}
	if !ok {
		d = describeTool(ref.Name, ref.Args, as.core.Cwd())
	}
	question := title
	if message != "" {
		if question != "" {
			question += "\n\n"
		}
		question += message
	}
	if question == "" {
		question = "An extension asks whether " + ref.Name + " may run."
	}
	label := title
	if label == "" {
		label = ref.Name
	}
	content := []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(question))}
	switch as.askPermission(ctx, ref.ID, d, ref.Args, content, "Always allow: "+oneLine(label, 80), "Always reject: "+oneLine(label, 80)) {
	case optAllowAlways:
		as.mu.Lock()
		as.extAlways[key] = true
		as.mu.Unlock()
		fallthrough
	case optAllowOnce:
		as.mu.Lock()
		as.allowedCalls[ref.ID] = true
		as.mu.Unlock()
		return extensions.UIResponse{Confirmed: &yes}
	case optRejectAlways:
		as.mu.Lock()
		as.extAlways[key] = false
		as.mu.Unlock()
		return extensions.UIResponse{Confirmed: &no}
	case optRejectOnce:
		return extensions.UIResponse{Confirmed: &no}
	}
	return extensions.UIResponse{Cancelled: true}
}
