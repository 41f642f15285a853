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
	if el := u.as.srv.clientCaps().Elicitation; el != nil && el.Form != nil {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
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
