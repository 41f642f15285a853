package acp

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/extensions"
)

// extensionUI is the extension UI of one session in ACP mode. The
// questions of extensions (select, confirm, input, editor) are not tied
// to a tool call the editor knows, and the SDK's elicitation is not
// stable: they resolve as cancelled, and the conversation gets a one-line
// note saying so. An extension's notify message is shown as a note too;
// status, widget and title changes have no place in ACP and are dropped.
type extensionUI struct{ as *acpSession }

var _ extensions.UI = extensionUI{}

func (u extensionUI) Dialog(_ context.Context, method string, params map[string]any, _ time.Duration) extensions.UIResponse {
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
