package resources

import (
	"path"
	"regexp"
	"strings"
	"sync"
)

var globCache sync.Map // pattern -> *regexp.Regexp (nil when invalid)

// globRegexp translates a glob to an anchored regular expression:
// "*" matches within one path segment, "**" across segments ("**/" also
// matches nothing), "?" one character, "[...]" a class ("[!...]" negated),
// "{a,b}" alternatives.
func globRegexp(pattern string) *regexp.Regexp {
	if v, ok := globCache.Load(pattern); ok {
		re, _ := v.(*regexp.Regexp)
		return re
	}
	var b strings.Builder
	b.WriteString("^")
	depth := 0 // inside {...}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch c {
		case '*':
			if i+1 < len(pattern) && pattern[i+1] == '*' {
				i++
				if i+1 < len(pattern) && pattern[i+1] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '[':
			end := strings.IndexByte(pattern[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := pattern[i+1 : i+1+end]
			i += end + 1
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
		case '{':
			depth++
			b.WriteString("(?:")
		case '}':
			if depth > 0 {
				depth--
				b.WriteString(")")
			} else {
				b.WriteString(`\}`)
			}
		case ',':
			if depth > 0 {
				b.WriteString("|")
			} else {
				b.WriteString(",")
			}
		case '\\':
			if i+1 < len(pattern) {
				i++
				b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	for ; depth > 0; depth-- {
		b.WriteString(")")
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		re = nil
	}
	globCache.Store(pattern, re)
	return re
}

// MatchGlob reports whether file matches the glob pattern. Paths use "/" or
// the OS separator. A pattern without "/" matches the base name (or the
// whole path); a relative pattern with "/" may match any trailing part of the
// path, so "src/**/*.ts" matches "/home/me/proj/src/a/b.ts".
func MatchGlob(pattern, file string) bool {
	pattern = strings.TrimSpace(pattern)
	if pattern == "" {
		return false
	}
	file = strings.ReplaceAll(file, `\`, "/")
	file = strings.TrimPrefix(file, "./")
	pattern = strings.TrimPrefix(pattern, "./")
	re := globRegexp(pattern)
	if re == nil {
		return false
	}
	if re.MatchString(file) {
		return true
	}
	if !strings.Contains(pattern, "/") {
		return re.MatchString(path.Base(file))
	}
	if strings.HasPrefix(pattern, "/") {
		return false
	}
	for i := 0; i < len(file); i++ {
		if file[i] == '/' && re.MatchString(file[i+1:]) {
			return true
		}
	}
	return false
}

// matchName matches a tool name against a pattern that may hold "*" and "?".
func matchName(pattern, name string) bool {
	if pattern == "" || pattern == "*" {
		return true
	}
	if !strings.ContainsAny(pattern, "*?[{") {
		return pattern == name
	}
	re := globRegexp(pattern)
	return re != nil && re.MatchString(name)
}
