package tools

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/pisces-agent/pisces/internal/fsx"
)

// unicodeSpaces are normalised to ASCII spaces in paths, as models sometimes
// emit them.
var unicodeSpaces = strings.NewReplacer(
	"\u00A0", " ", "\u2000", " ", "\u2001", " ", "\u2002", " ", "\u2003", " ",
	"\u2004", " ", "\u2005", " ", "\u2006", " ", "\u2007", " ", "\u2008", " ",
	"\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
)

// expandPath strips a leading '@', normalises unusual spaces and expands '~'.
func expandPath(p string) string {
	p = strings.TrimPrefix(p, "@")
	p = unicodeSpaces.Replace(p)
	if fsx.IsHomeRelative(p) {
		if home, err := fsx.HomeDir(); err == nil {
			p = home + p[1:]
		}
	}
	return p
}

// resolvePath resolves p against cwd after expansion.
func resolvePath(p, cwd string) string {
	p = expandPath(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	return filepath.Join(cwd, p)
}
