package session

// DetachFile turns an open session into a read-only view of its file:
// everything stays readable, and entries appended from now on live in
// memory only, never reaching the file (another process is writing it).
// Call it before the session is shared.
func (s *Session) DetachFile() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inMemory = true
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}
