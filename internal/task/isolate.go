package task

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// worktreeMu serialises worktree creation and removal: git locks its
// administrative files and concurrent "worktree add" calls can collide.
var worktreeMu sync.Mutex

// cleanupTimeout bounds the git calls of a cleanup, which run even after
// the task's context was cancelled.
const cleanupTimeout = 60 * time.Second

// repoState is the parent repository as isolated items start from it: HEAD
// plus the uncommitted changes (tracked diffs and untracked files).
type repoState struct {
	root      string // top level of the parent's work tree
	rel       string // the parent's cwd relative to root ("" or "sub/dir")
	head      string // commit id of HEAD
	diff      []byte // git diff HEAD (binary)
	untracked []string
}

// ErrNotGitRepo is wrapped by the error of an isolated call outside a git
// repository.
var ErrNotGitRepo = errors.New("not a git repository")

// snapshotRepo records the repository containing cwd.
func snapshotRepo(ctx context.Context, cwd string) (*repoState, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("Isolated task execution requires git, which was not found on PATH.")
	}
	out, err := git(ctx, cwd, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("Isolated task execution requires a git repository, and %s is not inside one (%w). Run without isolated, or run Pisces inside a repository.", cwd, ErrNotGitRepo)
	}
	root := strings.TrimSpace(string(out))
	head, err := git(ctx, root, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return nil, errors.New("Isolated task execution requires a git repository with at least one commit; HEAD does not resolve here.")
	}
	s := &repoState{root: root, head: strings.TrimSpace(string(head))}
	if rel, err := filepath.Rel(evalPath(root), evalPath(cwd)); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		s.rel = rel
	}
	s.diff, err = git(ctx, root, nil, "diff", "--binary", "--no-color", "--no-ext-diff", "--ignore-submodules",
		"--src-prefix=a/", "--dst-prefix=b/", "HEAD")
	if err != nil {
		return nil, fmt.Errorf("cannot read the uncommitted changes: %v", err)
	}
	list, err := git(ctx, root, nil, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, fmt.Errorf("cannot list untracked files: %v", err)
	}
	for _, p := range strings.Split(string(list), "\x00") {
		if p != "" {
			s.untracked = append(s.untracked, p)
		}
	}
	return s, nil
}

func evalPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// worktree is one isolated item's copy of the repository: a detached git
// worktree (no branch) in a temporary directory.
type worktree struct {
	repo     string // parent repository root
	tmp      string // temporary directory holding the worktree
	path     string // the worktree's top level
	cwd      string // the subagent's cwd inside it
	baseTree string // tree of HEAD plus the parent's changes
	adminDir string // git's record of the worktree (.git/worktrees/<name>)

	once sync.Once
}

// createWorktree makes a worktree at HEAD, applies the parent's uncommitted
// changes and records the result as the baseline for the patch. On error
// nothing is left behind.
func (s *repoState) createWorktree(ctx context.Context, name string) (w *worktree, err error) {
	tmp, err := os.MkdirTemp("", "pisces-task-"+sanitizeName(name)+"-")
	if err != nil {
		return nil, fmt.Errorf("cannot create a temporary directory for the worktree: %v", err)
	}
	w = &worktree{repo: s.root, tmp: tmp, path: filepath.Join(tmp, "repo")}
	defer func() {
		if err != nil {
			w.remove()
			w = nil
		}
	}()
	worktreeMu.Lock()
	_, err = git(ctx, s.root, nil, "worktree", "add", "--detach", "--quiet", w.path, s.head)
	worktreeMu.Unlock()
	if err != nil {
		return w, fmt.Errorf("cannot create a git worktree: %v", err)
	}
	if out, gerr := git(ctx, w.path, nil, "rev-parse", "--absolute-git-dir"); gerr == nil {
		w.adminDir = strings.TrimSpace(string(out))
	}
	if len(s.diff) > 0 {
		if _, err = git(ctx, w.path, s.diff, "apply", "--binary", "--whitespace=nowarn", "-"); err != nil {
			return w, fmt.Errorf("cannot apply the uncommitted changes to the worktree: %v", err)
		}
	}
	for _, rel := range s.untracked {
		if err = copyEntry(filepath.Join(s.root, rel), filepath.Join(w.path, rel)); err != nil {
			return w, fmt.Errorf("cannot copy untracked file %s into the worktree: %v", rel, err)
		}
	}
	if _, err = git(ctx, w.path, nil, "add", "-A"); err != nil {
		return w, fmt.Errorf("cannot stage the worktree baseline: %v", err)
	}
	tree, err := git(ctx, w.path, nil, "write-tree")
	if err != nil {
		return w, fmt.Errorf("cannot record the worktree baseline: %v", err)
	}
	w.baseTree = strings.TrimSpace(string(tree))
	w.cwd = w.path
	if s.rel != "" {
		w.cwd = filepath.Join(w.path, s.rel)
		if err = os.MkdirAll(w.cwd, 0o755); err != nil {
			return w, err
		}
	}
	return w, nil
}

// capturePatch returns the worktree's changes against the baseline as a
// patch that applies to the parent's work tree ("" when nothing changed).
func (w *worktree) capturePatch() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if _, err := git(ctx, w.path, nil, "add", "-A"); err != nil {
		return "", fmt.Errorf("cannot stage the worktree's changes: %v", err)
	}
	out, err := git(ctx, w.path, nil, "diff", "--cached", "--binary", "--no-color", "--no-ext-diff",
		"--ignore-submodules", "--src-prefix=a/", "--dst-prefix=b/", w.baseTree)
	if err != nil {
		return "", fmt.Errorf("cannot diff the worktree: %v", err)
	}
	return string(out), nil
}

// remove deletes the worktree, its directory and git's record of it. It
// is safe to call more than once and on a nil worktree.
func (w *worktree) remove() {
	if w == nil {
		return
	}
	w.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		worktreeMu.Lock()
		defer worktreeMu.Unlock()
		_, _ = git(ctx, w.repo, nil, "worktree", "remove", "--force", "--force", w.path)
		_ = os.RemoveAll(w.tmp)
		// When git could not remove it, drop its record by hand (rather than
		// "worktree prune", which would touch the user's other worktrees).
		if w.adminDir != "" && strings.Contains(filepath.ToSlash(w.adminDir), "/worktrees/") {
			_ = os.RemoveAll(w.adminDir)
		}
	})
}

func copyEntry(src, dst string) error {
	st, err := os.Lstat(src)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // gone since it was listed
		}
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	switch {
	case st.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case st.Mode().IsRegular():
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, st.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
	return nil
}

// git runs git in dir and returns its stdout; the error carries stderr.
func git(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.Bytes(), fmt.Errorf("git %s: %s", args[0], msg)
	}
	return stdout.Bytes(), nil
}

// gitEnv is the environment without variables that would point git at
// another repository, and without prompts.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR",
			"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
}
