package core

import (
	"context"

	"github.com/pisces-agent/pisces/internal/resources"
)

// Project trust is decided per directory (resources.TrustDecider): the
// session starts with the decision for its directory (Options.Trusted),
// and a session of another project that it opens (SwitchSession,
// NewSessionIn) gets that project's decision when one exists (a flag, a
// remembered answer); otherwise the project is not trusted until someone
// answers. A surface with a person behind it (the stdio RPC client's
// dialog, a terminal prompt, a web page, an editor) installs how to ask
// with SetTrustAsk and calls ResolveTrust once it is ready and after it
// opened a session, when its answer can follow its own reply; without one,
// a directory nothing has decided yet stays untrusted.

// Trusted reports whether the current project's own resources are loaded.
func (s *Session) Trusted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trusted
}

// SetTrusted records the trust decision for the current project and
// reloads settings and resources when it changed (session_changed
// {reason:"reload"}). It is not remembered: TrustDecider does that.
func (s *Session) SetTrusted(trusted bool) {
	s.setTrustedFor("", trusted)
}

// setTrustedFor is SetTrusted for the project at cwd: when the session has
// moved elsewhere meanwhile, nothing changes ("" means the current one).
func (s *Session) setTrustedFor(cwd string, trusted bool) {
	s.mu.Lock()
	if cwd != "" && cwd != s.cwd {
		s.mu.Unlock()
		return
	}
	changed := s.trusted != trusted
	s.trusted = trusted
	s.mu.Unlock()
	if changed {
		s.ReloadResources()
	}
}

// SetTrustAsk installs how this session asks a person whether to trust a
// project (nil: nobody can answer, and undecided projects are not trusted).
func (s *Session) SetTrustAsk(ask resources.TrustAsk) {
	s.mu.Lock()
	s.trustAsk = ask
	s.mu.Unlock()
}

// ResolveTrust decides trust for the current directory, asking through the
// installed TrustAsk when nothing has decided it yet (it returns when the
// person answered or the question timed out), and applies the decision.
// An answer that cannot be stored is logged and still applies.
func (s *Session) ResolveTrust(ctx context.Context) resources.TrustDecision {
	return s.ResolveTrustIn(ctx, s.Cwd())
}

// ResolveTrustIn is ResolveTrust for the directory dir, read by the caller
// before it let anything else happen (a surface that asks in the
// background passes the directory of the moment it decided to ask): the
// decision applies only while the session is still in dir.
func (s *Session) ResolveTrustIn(ctx context.Context, dir string) resources.TrustDecision {
	s.mu.Lock()
	ask := s.trustAsk
	s.mu.Unlock()
	d, err := s.opts.Trust.Decide(ctx, dir, ask)
	if err != nil {
		s.logf("cannot remember the trust decision for %s: %v", dir, err)
	}
	s.setTrustedFor(dir, d.Trusted)
	return d
}
