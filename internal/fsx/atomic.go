package fsx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// maxLinks bounds the symbolic links followed to find a file's target.
const maxLinks = 40

// WriteFile replaces the file at path with data atomically (see Write).
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write replaces the file at path atomically with what fill writes: readers
// see the old content or the new, never a part. The rule every atomic write
// of Pisces follows:
//
//   - when path is a symbolic link, the file it points to is replaced (the
//     link stays a link, as when an editor saves through it);
//   - the new content goes to a fresh temporary file created exclusively
//     (O_EXCL, a random name) in the target's directory, so nothing planted
//     there beforehand — a symbolic link named like the temporary file —
//     is followed or overwritten;
//   - the temporary file is synced, given the existing file's permission
//     bits (perm for a new file), renamed onto the target, and the
//     directory is synced.
//
// On failure the target is unchanged and the temporary file removed. The
// directory must exist.
func Write(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	target, err := ResolveLinks(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(target)
	if fi, err := os.Stat(target); err == nil {
		perm = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if err := fill(tmp); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, target); err != nil {
		os.Remove(name)
		return err
	}
	SyncDir(dir)
	return nil
}

// ResolveLinks follows path while it is a symbolic link and returns the
// final path (which may not exist yet: a link to a missing file resolves
// to that file). Only the last element is resolved; the directories above
// it are used as they are.
func ResolveLinks(path string) (string, error) {
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		p = dest
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// SyncDir flushes a directory's entries (after a rename or a new file);
// errors are ignored (some systems cannot sync directories).
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// MoveNoReplace renames src to dst, never replacing an existing dst (a
// file, a directory or a symbolic link, dangling or not): then the error
// satisfies errors.Is(err, fs.ErrExist) and src is left in place. It
// hard-links src as dst and removes src; on a file system without hard
// links it renames after checking that dst does not exist.
func MoveNoReplace(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil {
		if err := os.Remove(src); err != nil {
			os.Remove(dst)
			return err
		}
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, lerr := os.Lstat(src); lerr != nil {
		return err // src is the problem, not the link
	}
	if _, lerr := os.Lstat(dst); lerr == nil {
		return &fs.PathError{Op: "move", Path: dst, Err: fs.ErrExist}
	}
	return os.Rename(src, dst)
}
