package rpcmode

import (
	"context"
	"time"

	"github.com/pisces-agent/pisces/internal/resources"
)

// TrustTimeout is how long the client has to answer the trust question
// (many clients never answer UI requests: silence counts as refusal).
const TrustTimeout = 30 * time.Second

var _ resources.TrustAsk = (*Hub)(nil).AskTrust

// AskTrust is how a session asks its clients whether to trust a project
// (a resources.TrustAsk): a confirm dialog on the extension UI, sent to
// every client attached to the session; the first answer counts. A yes or
// a no is an answer; a timeout, a cancelled dialog or ctx done is none. A
// shared session with no client attached asks nobody: that is no answer.
// Serve installs it on the stdio session, so that the project Pisces
// started in and any project a switch_session moves to are asked about.
func (h *Hub) AskTrust(ctx context.Context, project string) (answer, answered bool) {
	if h.opts.Shared && h.count() == 0 {
		return false, false
	}
	title, message := resources.TrustQuestion(project)
	r := h.ui.Dialog(ctx, "confirm", map[string]any{"title": title, "message": message}, TrustTimeout)
	if r.Confirmed == nil || r.Cancelled {
		return false, false
	}
	return *r.Confirmed, true
}

// resolveTrust decides trust for the session's current directory in the
// background, asking the clients when nothing has decided it yet.
func (h *Hub) resolveTrust() {
	dir := h.sess.Cwd()
	h.trustMu.Lock()
	defer h.trustMu.Unlock()
	if h.trustClosed {
		return
	}
	h.trustWG.Add(1)
	go func() {
		defer h.trustWG.Done()
		h.sess.ResolveTrustIn(h.trustCtx, dir)
	}()
}

// closeTrust ends the trust questions still open (nobody is left to answer
// them; an answer already read is kept and stored) and waits for them.
func (h *Hub) closeTrust() {
	h.trustMu.Lock()
	h.trustClosed = true
	h.trustMu.Unlock()
	h.trustCancel()
	h.trustWG.Wait()
}
