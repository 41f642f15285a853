package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/pisces-agent/pisces/internal/ai"
)

// TreeNode is one entry of the session tree.
type TreeNode struct {
	Entry          *Entry
	Children       []*TreeNode
	Label          string // current label ("" if none)
	LabelTimestamp string // timestamp of the label entry that set it
}

// Tree returns the entries as a forest (pi's getTree): roots are entries
// whose parentId is null, their own id, or missing (orphans), in append
// order; children are sorted by timestamp (stable); the latest label per
// target wins.
func (s *Session) Tree() []*TreeNode {
	s.mu.Lock()
	defer s.mu.Unlock()
	nodes := make(map[string]*TreeNode, len(s.entries))
	all := make([]TreeNode, len(s.entries))
	for i, e := range s.entries {
		n := &all[i]
		n.Entry = e
		if l, ok := s.labels[e.ID]; ok {
			n.Label, n.LabelTimestamp = l.label, l.timestamp
		}
		if e.ID != "" {
			if _, dup := nodes[e.ID]; !dup {
				nodes[e.ID] = n
			}
		}
	}
	var roots []*TreeNode
	for i, e := range s.entries {
		n := &all[i]
		if e.ParentID == nil || *e.ParentID == e.ID {
			roots = append(roots, n)
			continue
		}
		if p := nodes[*e.ParentID]; p != nil {
			p.Children = append(p.Children, n)
		} else {
			roots = append(roots, n)
		}
	}
	ms := make(map[*Entry]int64, len(s.entries))
	for _, e := range s.entries {
		ms[e] = isoToMs(e.Timestamp)
	}
	for i := range all {
		c := all[i].Children
		if len(c) > 1 {
			sort.SliceStable(c, func(a, b int) bool { return ms[c[a].Entry] < ms[c[b].Entry] })
		}
	}
	return roots
}

// Fork starts a new session from the user message entryID (pi's fork): the
// new file holds the path up to that message's parent, and its header
// names this session's file. dir is the directory of the new file ("" =
// this session's directory).
func (s *Session) Fork(entryID string, dir string) (*Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.lookup(entryID)
	if e == nil || e.Type != TypeMessage || e.Role() != ai.RoleUser {
		return nil, errors.New("Invalid entry ID for forking")
	}
	if err := s.savedLocked(); err != nil {
		return nil, err
	}
	if e.ParentID == nil || s.lookup(*e.ParentID) == nil {
		ns, err := s.branchedLocked(nil, dir)
		return ns, err
	}
	return s.branchedLocked(s.lookup(*e.ParentID), dir)
}

// Clone copies the active branch, up to the leaf, into a new session.
func (s *Session) Clone(dir string) (*Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leaf == nil {
		return nil, errors.New("Cannot clone session: no current entry selected")
	}
	if err := s.savedLocked(); err != nil {
		return nil, err
	}
	return s.branchedLocked(s.leaf, dir)
}

func (s *Session) savedLocked() error {
	if !s.inMemory && !s.onDisk {
		return errors.New("This session has not been saved yet. Send a message before cloning or forking it.")
	}
	return nil
}

// branchedLocked is pi's createBranchedSession: a new header whose
// parentSession is this file, the path root..leaf without label entries
// (parentIds re-chained over them), then fresh label entries for the
// labels that target path entries. The file is written at once when it
// holds a user or assistant message, otherwise at the first one.
func (s *Session) branchedLocked(leaf *Entry, dir string) (*Session, error) {
	var path []*Entry
	if leaf != nil {
		path = s.branchLocked(leaf)
		if len(path) == 0 {
			return nil, fmt.Errorf("Entry %s not found", leaf.ID)
		}
	}
	ns := newEmpty()
	fileBacked := !s.inMemory || s.detached
	ns.inMemory = !fileBacked
	id := NewUUIDv7()
	ts := isoNow()
	parent := ""
	if fileBacked {
		parent = s.path
	}
	ns.header = newHeader(id, ts, s.header.Cwd, parent)
	if fileBacked {
		if dir == "" {
			dir = filepath.Dir(s.path)
		}
		ns.path = filepath.Join(dir, FileName(ts, id))
	}

	var prev *string
	inPath := map[string]bool{}
	removed := map[string]bool{}
	for _, e := range path {
		if e.Type == TypeLabel {
			removed[e.ID] = true
			continue
		}
		ne := e
		if e.ParentID != nil && removed[*e.ParentID] {
			ne = withParent(e, prev)
		}
		ns.index(ne)
		inPath[e.ID] = true
		idc := e.ID
		prev = &idc
	}
	for _, target := range s.labelOrder {
		if !inPath[target] {
			continue
		}
		l := s.labels[target]
		le := &Entry{Type: TypeLabel, ParentID: prev, Timestamp: l.timestamp, Fields: &Fields{TargetID: target}}
		if le.Timestamp == "" {
			le.Timestamp = isoNow()
		}
		label := l.label
		le.Label = &label
		le.ID = newEntryID(ns.has)
		if err := encode(le); err != nil {
			return nil, err
		}
		ns.index(le)
		idc := le.ID
		prev = &idc
	}
	if !ns.inMemory && ns.hasConv {
		if err := ns.createFileLocked(nil); err != nil {
			return nil, err
		}
	}
	return ns, nil
}

// ForkFrom copies a whole session file into a new session of another
// working directory (pi's forkFrom, behind --fork): a new header with a new
// id (opts.ID when given), opts.Cwd as its cwd and the source file as its
// parentSession, then every entry of the source, byte for byte and in file
// order, so the new session has the source's whole tree, labels and name.
// The new file goes into opts.Dir and is written at once when it holds a
// user or assistant message. The source is only read (a source of an older
// version is migrated first, as on every open).
func ForkFrom(src string, opts Options) (*Session, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("Cannot fork: %w", err)
	} else if fi.Size() == 0 {
		return nil, fmt.Errorf("Cannot fork: source session file is empty or invalid: %s", abs)
	}
	old, _, err := Open(abs)
	if err != nil {
		return nil, fmt.Errorf("Cannot fork: %w", err)
	}
	defer old.Close()
	ns, err := New(Options{Dir: opts.Dir, Cwd: opts.Cwd, InMemory: opts.InMemory, ParentSession: abs, ID: opts.ID})
	if err != nil {
		return nil, err
	}
	old.mu.Lock()
	defer old.mu.Unlock()
	ns.mu.Lock()
	defer ns.mu.Unlock()
	for _, e := range old.entries {
		ns.index(e)
	}
	if !ns.inMemory && ns.hasConv {
		if err := ns.createFileLocked(nil); err != nil {
			return nil, err
		}
	}
	return ns, nil
}
