package prompt

import (
	"os"
	"path/filepath"
)

// ContextFile is a project instruction file (AGENTS.md or CLAUDE.md) and its
// contents.
type ContextFile struct {
	Path    string
	Content string
}

// contextFileNames are tried in order in each directory; the first that
// exists is used.
var contextFileNames = []string{"AGENTS.md", "CLAUDE.md"}

// LoadContextFiles finds the context files: first the one in agentDir, then
// one per directory from the filesystem root down to cwd (root first, cwd
// last). In each directory AGENTS.md is used, else CLAUDE.md. A file reached
// twice (the agent dir is also an ancestor of cwd, or through a symlink) is
// listed once, at its first place. Unreadable files are skipped. Either
// argument may be empty.
func LoadContextFiles(agentDir, cwd string) []ContextFile {
	var dirs []string
	if agentDir != "" {
		dirs = append(dirs, agentDir)
	}
	if cwd != "" {
		if abs, err := filepath.Abs(cwd); err == nil {
			cwd = abs
		}
		var chain []string
		for dir := filepath.Clean(cwd); ; {
			chain = append(chain, dir)
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
		for i := len(chain) - 1; i >= 0; i-- {
			dirs = append(dirs, chain[i])
		}
	}

	seen := map[string]bool{}
	var files []ContextFile
	for _, dir := range dirs {
		f, ok := readContextFile(dir)
		if !ok {
			continue
		}
		key := f.Path
		if abs, err := filepath.Abs(key); err == nil {
			key = abs
		}
		if real, err := filepath.EvalSymlinks(key); err == nil {
			key = real
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		files = append(files, f)
	}
	return files
}

func readContextFile(dir string) (ContextFile, bool) {
	for _, name := range contextFileNames {
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		return ContextFile{Path: path, Content: string(data)}, true
	}
	return ContextFile{}, false
}
