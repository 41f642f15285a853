package core

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pisces-agent/pisces/internal/export"
	"github.com/pisces-agent/pisces/internal/session"
)

// sessionRoots are the directories whose session files the browsing
// commands may touch: <agentDir>/sessions and the configured session dir.
func (s *Session) sessionRoots() []string {
	roots := []string{filepath.Join(s.opts.AgentDir, "sessions")}
	if s.opts.SessionDir != "" {
		roots = append(roots, s.opts.SessionDir)
	}
	return roots
}

// inSessionDirs reports whether path is a .jsonl file inside a session
// directory.
func (s *Session) inSessionDirs(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil || !strings.HasSuffix(abs, ".jsonl") {
		return false
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	for _, root := range s.sessionRoots() {
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
		rel, err := filepath.Rel(root, abs)
		if err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

// ListSessions lists sessions: "cwd"/"current" (this project; a custom
// session dir is filtered by the header's cwd, as pi does), "all" (every
// project), or the sessions of dir when given.
func (s *Session) ListSessions(scope, dir string) ([]session.Info, error) {
	switch {
	case dir != "":
		return session.List(dir, "")
	case scope == "all":
		infos, err := session.ListAll(filepath.Join(s.opts.AgentDir, "sessions"))
		if err != nil {
			return nil, err
		}
		if s.opts.SessionDir != "" {
			more, err := session.List(s.opts.SessionDir, "")
			if err == nil {
				seen := map[string]bool{}
				for _, i := range infos {
					seen[i.Path] = true
				}
				for _, i := range more {
					if !seen[i.Path] {
						infos = append(infos, i)
					}
				}
			}
		}
		return infos, nil
	case scope == "" || scope == "cwd" || scope == "current":
		filter := ""
		if s.opts.SessionDir != "" {
			filter = s.Cwd()
		}
		return session.List(s.sessionDir(), filter)
	}
	return nil, fmt.Errorf("Invalid scope %q: expected \"cwd\", \"current\" or \"all\"", scope)
}

// RenameSession names any session (the active one through its store).
func (s *Session) RenameSession(path, name string) error {
	if s.isActive(path) {
		return s.SetSessionName(name)
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return fmt.Errorf("Session name cannot be empty")
	}
	st, _, err := session.Open(path)
	if err != nil {
		return err
	}
	defer st.Close()
	_, err = st.AppendSessionInfo(name)
	return err
}

func (s *Session) isActive(path string) bool {
	cur := s.Store().File()
	if cur == "" {
		return false
	}
	a, _ := filepath.Abs(path)
	b, _ := filepath.Abs(cur)
	return a == b
}

// DeleteSession moves a session file into <agentDir>/trash/ (nothing is
// destroyed). The active session and paths outside the session
// directories are refused.
func (s *Session) DeleteSession(path string) (string, error) {
	if s.isActive(path) {
		return "", fmt.Errorf("Cannot delete the active session: %s", path)
	}
	if !s.inSessionDirs(path) {
		return "", fmt.Errorf("Not a session file in the session directories: %s", path)
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("Session file not found: %s", path)
	}
	trash := filepath.Join(s.opts.AgentDir, "trash")
	if err := os.MkdirAll(trash, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(trash, filepath.Base(path))
	if _, err := os.Stat(dst); err == nil {
		dst = filepath.Join(trash, time.Now().UTC().Format("20060102T150405.000000")+"_"+filepath.Base(path))
	}
	if err := os.Rename(path, dst); err != nil {
		return "", err
	}
	session.ClearListCache()
	return dst, nil
}

// ExportHTML writes the current branch as one self-contained HTML file and
// returns its path (default: next to the session file, or in the working
// directory for an unsaved session).
func (s *Session) ExportHTML(outputPath string) (string, error) {
	st := s.Store()
	if outputPath == "" {
		if f := st.File(); f != "" {
			outputPath = strings.TrimSuffix(f, ".jsonl") + ".html"
		} else {
			outputPath = filepath.Join(s.Cwd(), "pisces-session-"+st.ID()+".html")
		}
	}
	return ExportFile(st, outputPath)
}

// ExportFile writes a session's current branch to path as HTML.
func ExportFile(st *session.Session, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	tmp := abs + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return "", err
	}
	if err := export.HTML(st, f, export.Options{}); err != nil {
		f.Close()
		os.Remove(tmp)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return abs, os.Rename(tmp, abs)
}
