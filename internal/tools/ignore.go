package tools

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// ignoreRule is one line of a .gitignore file.
type ignoreRule struct {
	re      *regexp.Regexp
	negate  bool
	dirOnly bool
	// basename rules have no slash and match the name at any depth
	basename bool
}

// ignoreFile holds the rules of one ignore file, relative to its directory
// (dir is a slash path relative to the walk root, "" for the root itself; for
// files above the root, prefix is the root's path relative to their dir).
type ignoreFile struct {
	dir    string
	prefix string
	rules  []ignoreRule
}

// ignoreFileNames are the ignore files honoured in every directory.
var ignoreFileNames = []string{".gitignore", ".ignore"}

func parseIgnore(data string) []ignoreRule {
	var rules []ignoreRule
	for _, line := range strings.Split(strings.ReplaceAll(data, "\r\n", "\n"), "\n") {
		line = trimIgnoreTrailingSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{}
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		if strings.Contains(line, "/") {
			line = strings.TrimPrefix(line, "/")
		} else {
			r.basename = true
		}
		re, err := globToRegexp(line, false)
		if err != nil {
			continue
		}
		r.re = re
		rules = append(rules, r)
	}
	return rules
}

// trimIgnoreTrailingSpace removes trailing spaces that are not escaped.
func trimIgnoreTrailingSpace(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	return s
}

// match reports whether the file decides rel (relative to the walk root):
// decided is false when no rule matched.
func (f *ignoreFile) match(rel string, isDir bool) (ignored, decided bool) {
	local := rel
	if f.prefix != "" {
		local = f.prefix + "/" + rel
	} else if f.dir != "" {
		if !strings.HasPrefix(rel, f.dir+"/") {
			return false, false
		}
		local = rel[len(f.dir)+1:]
	}
	base := path.Base(local)
	for i := len(f.rules) - 1; i >= 0; i-- {
		r := f.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		subject := local
		if r.basename {
			subject = base
		}
		if r.re.MatchString(subject) {
			return !r.negate, true
		}
	}
	return false, false
}

// ignoreStack is the ignore files in effect for a directory, outermost first.
type ignoreStack []*ignoreFile

func (s ignoreStack) ignored(rel string, isDir bool) bool {
	for i := len(s) - 1; i >= 0; i-- {
		if ign, ok := s[i].match(rel, isDir); ok {
			return ign
		}
	}
	return false
}

// ignoreFileMax is the largest ignore file honoured; a larger one (or one
// that is not a regular file, such as a FIFO) is skipped.
const ignoreFileMax = 1 << 20

func readIgnoreFile(abs string) ([]byte, error) {
	f, st, err := openRegular(abs, "ignore files are")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAllCapped(context.Background(), f, ignoreFileMax, st.Size())
}

// loadIgnoreFiles reads the ignore files of dir (absolute), relative path rel.
func loadIgnoreFiles(absDir, rel, prefix string) []*ignoreFile {
	var out []*ignoreFile
	for _, name := range ignoreFileNames {
		data, err := readIgnoreFile(filepath.Join(absDir, name))
		if err != nil {
			continue
		}
		if rules := parseIgnore(string(data)); len(rules) > 0 {
			out = append(out, &ignoreFile{dir: rel, prefix: prefix, rules: rules})
		}
	}
	return out
}

// parentIgnores returns the ignore files of root's ancestors up to the
// enclosing git repository's top level (none when root is not in a repo).
func parentIgnores(root string) ignoreStack {
	var chain []string
	dir := root
	found := false
	for {
		if st, err := os.Stat(filepath.Join(dir, ".git")); err == nil && st != nil {
			found = true
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		chain = append(chain, parent)
		dir = parent
	}
	if !found {
		return nil
	}
	var stack ignoreStack
	for i := len(chain) - 1; i >= 0; i-- {
		relToParent, err := filepath.Rel(chain[i], root)
		if err != nil {
			continue
		}
		stack = append(stack, loadIgnoreFiles(chain[i], "", filepath.ToSlash(relToParent))...)
	}
	return stack
}
