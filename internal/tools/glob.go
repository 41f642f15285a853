package tools

import (
	"regexp"
	"strings"
)

// globToRegexp translates a glob to an anchored regular expression over
// slash-separated paths: '*' and '?' do not cross '/', "**" as a whole
// segment matches any number of segments, [...] is a character class
// ("[!...]" negated) and a backslash escapes the next character.
func globToRegexp(glob string, ignoreCase bool) (*regexp.Regexp, error) {
	var b strings.Builder
	if ignoreCase {
		b.WriteString("(?i)")
	}
	b.WriteString("^")
	n := len(glob)
	for i := 0; i < n; i++ {
		c := glob[i]
		switch c {
		case '*':
			if i+1 < n && glob[i+1] == '*' {
				atStart := i == 0 || glob[i-1] == '/'
				j := i + 2
				if atStart && (j == n || glob[j] == '/') {
					switch {
					case j == n && i == 0:
						b.WriteString(".*")
					case j == n: // "dir/**": everything below
						b.WriteString(".*")
					default: // "**/": zero or more directories
						b.WriteString("(?:.*/)?")
						j++
					}
					i = j - 1
					continue
				}
				// "**" inside a segment behaves like "*"
				b.WriteString("[^/]*")
				i++
				continue
			}
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '[':
			j := i + 1
			if j < n && (glob[j] == '!' || glob[j] == '^') {
				j++
			}
			if j < n && glob[j] == ']' {
				j++
			}
			for j < n && glob[j] != ']' {
				j++
			}
			if j >= n {
				b.WriteString(`\[`)
				continue
			}
			class := glob[i+1 : j]
			b.WriteByte('[')
			if strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^") {
				b.WriteByte('^')
				class = class[1:]
			}
			for k := 0; k < len(class); k++ {
				ch := class[k]
				if ch == '\\' || ch == '[' || ch == ']' || ch == '^' {
					b.WriteByte('\\')
				}
				b.WriteByte(ch)
			}
			b.WriteByte(']')
			i = j
		case '\\':
			if i+1 < n {
				i++
				b.WriteString(regexp.QuoteMeta(string(glob[i])))
			} else {
				b.WriteString(`\\`)
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// pathGlob matches relative slash paths like ripgrep's and fd's globs: a
// pattern without '/' matches the base name at any depth, one with '/'
// matches the whole relative path (a leading '/' anchors it to the root).
type pathGlob struct {
	re       *regexp.Regexp
	basename bool
}

func compilePathGlob(pattern string) (*pathGlob, error) {
	p := strings.TrimPrefix(pattern, "/")
	re, err := globToRegexp(p, false)
	if err != nil {
		return nil, err
	}
	return &pathGlob{re: re, basename: !strings.Contains(pattern, "/")}, nil
}

func (g *pathGlob) match(rel string) bool {
	if g.basename {
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			rel = rel[i+1:]
		}
	}
	return g.re.MatchString(rel)
}
