package rpcmode

// Sessions carries out the commands that open another session for a
// connection: new_session, switch_session, fork (and branch) and clone. A
// call returns the hub the connection continues on; when that is another
// hub than from, the connection is attached to it (and told alone, with
// session_changed), and the hub it left is handed back with Release.
type Sessions interface {
	NewSession(from *Hub, cwd, parentSession string) (*Hub, error)
	Switch(from *Hub, path string) (*Hub, error)
	Fork(from *Hub, entryID string) (*Hub, string, error)
	Clone(from *Hub) (*Hub, error)
	// Release tells that a connection left h.
	Release(h *Hub)
	// Writer says who writes the session file path: a session open in
	// this process (its hub), or nobody here (nil); an error when another
	// process writes it (rename_session and delete_session then refuse).
	Writer(path string) (*Hub, error)
}

// InPlacer is a Sessions whose moves replace the session's store in place
// (stdio's policy, with or without locks): the session announces the move
// itself (session_changed), so the connection is not told again.
type InPlacer interface {
	InPlace() bool
}

// inPlace is the one-client policy of stdio: the session replaces its
// store in place and announces it (session_changed) to its subscribers,
// and the connection stays on the same hub.
type inPlace struct{}

func (inPlace) NewSession(from *Hub, cwd, parent string) (*Hub, error) {
	return from, from.sess.NewSessionIn(cwd, parent)
}

func (inPlace) Switch(from *Hub, path string) (*Hub, error) {
	return from, from.sess.SwitchSession(path)
}

func (inPlace) Fork(from *Hub, entryID string) (*Hub, string, error) {
	text, err := from.sess.Fork(entryID)
	return from, text, err
}

func (inPlace) Clone(from *Hub) (*Hub, error) { return from, from.sess.Clone() }

func (inPlace) Release(*Hub) {}

func (inPlace) InPlace() bool { return true }

// Writer: the stdio session checks its own file itself (core's
// RenameSession and DeleteSession know the active one).
func (inPlace) Writer(string) (*Hub, error) { return nil, nil }
