// Package fsx holds the file-system rules every part of Pisces shares: where
// the user's home directory is, and how a file is replaced atomically
// without following a symbolic link planted in its place.
package fsx

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
)

// ErrNoHome reports that the user's home directory cannot be found.
var ErrNoHome = errors.New("cannot find your home directory")

var (
	accountMu   sync.Mutex
	accountHome = func() (string, error) {
		u, err := user.Current()
		if err != nil {
			return "", err
		}
		return u.HomeDir, nil
	}
)

// OverrideAccountHome replaces the account-database lookup HomeDir falls
// back to (tests use it to run without a home directory, or with a known
// one). It returns a function restoring the real lookup.
func OverrideAccountHome(f func() (string, error)) (restore func()) {
	accountMu.Lock()
	old := accountHome
	accountHome = f
	accountMu.Unlock()
	return func() {
		accountMu.Lock()
		accountHome = old
		accountMu.Unlock()
	}
}

// HomeDir returns the user's home directory, always an absolute path: $HOME
// when it is set to an absolute path, else the home directory of the
// current user in the OS account database (/etc/passwd and the like; the
// pure-Go lookup needs no C library). When neither gives an absolute path
// the error wraps ErrNoHome and says why: a relative home would make the
// working directory, which may be a repository, stand in for it.
func HomeDir() (string, error) {
	env := os.Getenv("HOME")
	if env != "" && filepath.IsAbs(env) {
		return filepath.Clean(env), nil
	}
	accountMu.Lock()
	lookup := accountHome
	accountMu.Unlock()
	if h, err := lookup(); err == nil && h != "" && filepath.IsAbs(h) {
		return filepath.Clean(h), nil
	}
	if env == "" {
		return "", fmt.Errorf("%w (HOME is unset)", ErrNoHome)
	}
	return "", fmt.Errorf("%w (HOME is not an absolute path: %q)", ErrNoHome, env)
}

// IsHomeRelative reports whether p starts with "~" as its own path element
// ("~", "~/x", and on Windows also "~\x").
func IsHomeRelative(p string) bool {
	return p == "~" || strings.HasPrefix(p, "~/") || (filepath.Separator == '\\' && strings.HasPrefix(p, `~\`))
}

// ExpandHome replaces a leading "~" element of p with the home directory.
// Other paths are returned unchanged. When p needs the home directory and
// there is none, the error names p (it is never left to resolve against
// the working directory).
func ExpandHome(p string) (string, error) {
	if !IsHomeRelative(p) {
		return p, nil
	}
	home, err := HomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot expand %q: %w", p, err)
	}
	return filepath.Join(home, p[1:]), nil
}
