package session

// DetachFile turns an open session into a read-only view of its file:
// everything stays readable, and entries appended from now on live in
// memory only, never reaching the file (another process is writing it).
// Call it before the session is shared. A fork or clone of the view is a
// new file of its own, as it would be of the file.
func (s *Session) DetachFile() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inMemory = true
	s.detached = s.path != ""
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}
