package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/resources"
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
	if u.as.srv.canElicit() {
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

// canElicit reports a client that advertised form elicitation.
func (s *Server) canElicit() bool {
	el := s.clientCaps().Elicitation
	return el != nil && el.Form != nil
}

// announce sends what a client learns about a session it opened: the
// commands, and, when the project has resources of its own that nobody
// decided to trust, the trust question (a client with form elicitation)
// or a note saying they are not loaded.
func (as *acpSession) announce() {
	as.announceCommands()
	if as.srv.opts.TrustNote == nil {
		return
	}
	n := as.srv.opts.TrustNote(as.core.Cwd())
	if n == "" {
		return
	}
	if as.srv.canElicit() {
		dir := as.core.Cwd()
		go as.resolveTrust(dir, n)
		return
	}
	as.note(n)
}

// resolveTrust asks the trust question about dir and applies the answer:
// a yes reloads the project's settings and resources (the commands are
// announced again); a no, or no answer, is a note saying the project's
// resources are not loaded.
func (as *acpSession) resolveTrust(dir, note string) {
	d := as.core.ResolveTrustIn(as.life, dir)
	if as.life.Err() != nil {
		return
	}
	switch {
	case d.Trusted:
		as.announceCommands()
	case d.Source == resources.TrustFromAnswer:
		as.note(fmt.Sprintf("%s is not trusted: its own Pisces resources (.pisces/ and the like) are not loaded. The answer is remembered; pisces --approve started in it trusts it.", dir))
	case d.Source == resources.TrustNoAnswer:
		as.note(note)
	}
}

// askTrust is the session's resources.TrustAsk with a client that
// advertised form elicitation: the question as elicitation/create with
// no fields, where accept trusts the project and decline does not (an
// answer, remembered as in every mode); cancel, an error or the session
// closing first is no answer.
func (as *acpSession) askTrust(ctx context.Context, project string) (answer, answered bool) {
	title, message := resources.TrustQuestion(project)
	resp := as.srv.lw.call(ctx, "elicitation/create", elicitRequest{
		SessionID: as.id, Mode: "form", Message: title + "\n\n" + message,
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	})
	var r struct {
		Result *struct {
			Action string `json:"action"`
		} `json:"result"`
	}
	if resp == nil || json.Unmarshal(resp, &r) != nil || r.Result == nil {
		return false, false
	}
	switch r.Result.Action {
	case "accept":
		return true, true
	case "decline":
		return false, true
	}
	return false, false
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
