package core

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pisces-agent/pisces/internal/export"
	"github.com/pisces-agent/pisces/internal/fsx"
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
	// Nothing already in the trash is replaced (a file, or a link planted
	// under the same name): the next free name is taken.
	base := filepath.Base(path)
	stamp := time.Now().UTC().Format("20060102T150405.000000")
	for i := 0; ; i++ {
		var dst string
		switch i {
		case 0:
			dst = filepath.Join(trash, base)
		case 1:
			dst = filepath.Join(trash, stamp+"_"+base)
		default:
			dst = filepath.Join(trash, fmt.Sprintf("%s-%d_%s", stamp, i, base))
		}
		err := fsx.MoveNoReplace(path, dst)
		if err == nil {
			session.ClearListCache()
			return dst, nil
		}
		if !errors.Is(err, fs.ErrExist) || i >= 100 {
			return "", err
		}
	}
}

// ExportHTML writes the current branch as one self-contained HTML file and
// returns its path (default: next to the session file, or in the working
// directory for an unsaved session).
func (s *Session) ExportHTML(outputPath string) (string, error) {
	st := s.Store()
	if outputPath == "" {
		outputPath = s.exportPath(st)
	}
	return ExportFile(st, outputPath)
}

// exportPath is where ExportHTML writes by default.
func (s *Session) exportPath(st *session.Session) string {
	if f := st.File(); f != "" {
		return strings.TrimSuffix(f, ".jsonl") + ".html"
	}
	return filepath.Join(s.Cwd(), "pisces-session-"+st.ID()+".html")
}

// ExportHTMLContent returns the page ExportHTML would write, without
// writing anything, and the file name ExportHTML would give it (for a
// client that saves it elsewhere, such as a browser's download).
func (s *Session) ExportHTMLContent() (html []byte, fileName string, err error) {
	st := s.Store()
	var b bytes.Buffer
	if err := export.HTML(st, &b, export.Options{}); err != nil {
		return nil, "", err
	}
	return b.Bytes(), filepath.Base(s.exportPath(st)), nil
}

// ExportFile writes a session's current branch to path as HTML, replacing
// the file atomically (fsx.Write: a fresh temporary file, never a fixed
// name that a planted symbolic link could redirect).
func ExportFile(st *session.Session, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	err = fsx.Write(abs, 0o644, func(w io.Writer) error { return export.HTML(st, w, export.Options{}) })
	if err != nil {
		return "", err
	}
	return abs, nil
}
