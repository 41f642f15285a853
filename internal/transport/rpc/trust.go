package rpcmode

import (
	"context"
	"time"

	"github.com/pisces-agent/pisces/internal/resources"
)

// TrustTimeout is how long the client has to answer the trust question
// (many clients never answer UI requests: silence counts as refusal).
const TrustTimeout = 30 * time.Second

var _ resources.TrustAsk = (*Server)(nil).AskTrust

// AskTrust is this connection's way of asking whether to trust a project
// (a resources.TrustAsk): a confirm dialog on the extension UI. A yes or a
// no is an answer; a timeout, a cancelled dialog or ctx done is none.
// Serve installs it on the session, so that the project Pisces started in
// and any project a switch_session moves to are asked about here.
func (s *Server) AskTrust(ctx context.Context, project string) (answer, answered bool) {
	title, message := resources.TrustQuestion(project)
	r := s.ui.Dialog(ctx, "confirm", map[string]any{"title": title, "message": message}, TrustTimeout)
	if r.Confirmed == nil || r.Cancelled {
		return false, false
	}
	return *r.Confirmed, true
}
