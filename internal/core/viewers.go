package core

// What a surface that holds several sessions needs of one (a session
// manager hands the same live session to every viewer, and opens a session
// of its own for each new, switched-to, forked or cloned one instead of
// replacing the store in place).

// AllowSessionChange asks the extensions whether a session action may go
// on (kind "switch" or "fork", with the payload pi's session_before_<kind>
// hooks receive); false means an extension cancelled it.
func (s *Session) AllowSessionChange(kind string, payload map[string]any) bool {
	return s.sessionBefore(kind, payload)
}

// SessionDirFor is the folder the session files of the project at cwd go
// to (see Options.SessionDir).
func (s *Session) SessionDirFor(cwd string) string { return s.sessionDirFor(cwd) }

// InMemory reports whether new sessions of this one are kept in memory
// (--no-session).
func (s *Session) InMemory() bool { return s.opts.InMemory }

// Busy reports whether work is going on that must not be cut short by
// closing the session: a run (with its retries and queued continuations),
// a compaction or branch summary, or a user bash command.
func (s *Session) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run != nil || s.compacting > 0 || s.bash != nil
}
