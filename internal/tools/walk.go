package tools

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// errStopWalk ends a walk early without an error.
var errStopWalk = errors.New("stop walk")

// walkFiles visits the entries below root (absolute directory) in name
// order, skipping .git directories and anything ignored by .gitignore or
// .ignore files (the root's, its ancestors' up to the repository top, and
// nested ones, which apply to their own subtree). Hidden files are included
// and symbolic links are not followed. rel is slash-separated. Returning
// errStopWalk from visit ends the walk; fs.SkipDir skips a directory.
func walkFiles(ctx context.Context, root string, visit func(rel string, d fs.DirEntry) error) error {
	stack := parentIgnores(root)
	stack = append(stack, loadIgnoreFiles(root, "", "")...)
	err := walkDir(ctx, root, "", stack, visit)
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

func walkDir(ctx context.Context, abs, rel string, stack ignoreStack, visit func(string, fs.DirEntry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil // unreadable directories are skipped, as rg and fd do
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		childRel := name
		if rel != "" {
			childRel = rel + "/" + name
		}
		isDir := e.IsDir()
		if isDir && name == ".git" {
			continue
		}
		if stack.ignored(childRel, isDir) {
			continue
		}
		if err := visit(childRel, e); err != nil {
			if errors.Is(err, fs.SkipDir) {
				continue
			}
			return err
		}
		if isDir {
			childAbs := filepath.Join(abs, name)
			sub := stack
			if more := loadIgnoreFiles(childAbs, childRel, ""); len(more) > 0 {
				sub = append(append(ignoreStack(nil), stack...), more...)
			}
			if err := walkDir(ctx, childAbs, childRel, sub, visit); err != nil {
				return err
			}
		}
	}
	return nil
}
