package resources

import (
	"strconv"
	"strings"
)

// Frontmatter is the parsed YAML header of a resource file. Values are
// string, bool, int64, float64, nil, []any (lists) or map[string]any (one
// level of nested keys).
type Frontmatter map[string]any

// SplitFrontmatter separates a leading "---" block from the body of a
// Markdown file. It accepts a UTF-8 byte order mark and CRLF line ends. Files
// without a header, or with an unterminated one, have an empty header and
// are all body. The body keeps its text as written (line ends normalised to
// "\n").
func SplitFrontmatter(content string) (header, body string, ok bool) {
	content = strings.TrimPrefix(content, "\ufeff")
	content = strings.ReplaceAll(content, "\r\n", "\n")
	if !strings.HasPrefix(content, "---\n") && content != "---" {
		return "", content, false
	}
	rest := strings.TrimPrefix(content, "---")
	rest = strings.TrimPrefix(rest, "\n")
	// The closing line is "---" (trailing spaces tolerated).
	pos := 0
	for pos <= len(rest) {
		end := strings.IndexByte(rest[pos:], '\n')
		line := rest[pos:]
		if end >= 0 {
			line = rest[pos : pos+end]
		}
		if strings.TrimRight(line, " \t") == "---" {
			header = rest[:pos]
			if end < 0 {
				return header, "", true
			}
			return header, rest[pos+end+1:], true
		}
		if end < 0 {
			break
		}
		pos += end + 1
	}
	return "", content, false
}

// ParseFrontmatter splits content and parses its header. Problems in the
// header never fail: lines that cannot be read are skipped.
func ParseFrontmatter(content string) (Frontmatter, string) {
	header, body, _ := SplitFrontmatter(content)
	return ParseYAMLSubset(header), body
}

// ParseYAMLSubset reads the small part of YAML that resource headers use:
//
//	key: value             plain, "double" or 'single' quoted scalars
//	key: [a, "b c"]        flow lists
//	key:                   block lists ...
//	  - a
//	key: |  / key: >       literal and folded block scalars
//	key:                   one level of nested keys
//	  sub: value
//
// true/false (also yes/no/on/off) become bools, whole numbers int64, other
// numbers float64, null/~ nil. Comments start with "#" at the start of a
// line or after whitespace in a plain value. Anything else is skipped.
func ParseYAMLSubset(text string) Frontmatter {
	fm := Frontmatter{}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); {
		line := lines[i]
		if isBlankOrComment(line) || indentOf(line) > 0 {
			i++
			continue
		}
		key, rest, ok := splitKey(line)
		if !ok {
			i++
			continue
		}
		i++
		rest = strings.TrimSpace(rest)
		switch {
		case rest == "" || isCommentOnly(rest):
			// A block: list items, nested keys, or nothing (null).
			var block []string
			for i < len(lines) && (isBlankOrComment(lines[i]) || indentOf(lines[i]) > 0 || strings.HasPrefix(lines[i], "- ") || lines[i] == "-") {
				block = append(block, lines[i])
				i++
			}
			fm[key] = parseBlock(block)
		case rest[0] == '|' || rest[0] == '>':
			var block []string
			for i < len(lines) && (strings.TrimSpace(lines[i]) == "" || indentOf(lines[i]) > 0) {
				block = append(block, lines[i])
				i++
			}
			fm[key] = blockScalar(rest, block)
		default:
			v, consumed := parseInlineValue(rest, lines[i:])
			i += consumed
			if str, ok := v.(string); ok && consumed == 0 && rest[0] != '"' && rest[0] != '\'' && rest[0] != '[' {
				// A plain scalar continues on more-indented lines.
				for i < len(lines) && indentOf(lines[i]) > 0 && !isBlankOrComment(lines[i]) {
					str += " " + stripComment(strings.TrimSpace(lines[i]))
					i++
				}
				v = str
			}
			fm[key] = v
		}
	}
	return fm
}

func indentOf(line string) int {
	n := 0
	for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
		n++
	}
	return n
}

func isBlankOrComment(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || t[0] == '#'
}

func isCommentOnly(s string) bool { return strings.HasPrefix(s, "#") }

// splitKey reads `key: rest` (the key may be quoted).
func splitKey(line string) (key, rest string, ok bool) {
	line = strings.TrimLeft(line, " \t")
	if line == "" {
		return "", "", false
	}
	if line[0] == '"' || line[0] == '\'' {
		s, n, ok := readQuoted(line)
		if !ok {
			return "", "", false
		}
		after := strings.TrimLeft(line[n:], " \t")
		if !strings.HasPrefix(after, ":") {
			return "", "", false
		}
		return s, after[1:], true
	}
	for i := 0; i < len(line); i++ {
		if line[i] == ':' && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t') {
			k := strings.TrimSpace(line[:i])
			if k == "" {
				return "", "", false
			}
			return k, line[i+1:], true
		}
	}
	return "", "", false
}

// parseBlock reads the indented lines under `key:`: a list of items, or
// nested keys. An empty block is null.
func parseBlock(block []string) any {
	var content []string
	for _, l := range block {
		if !isBlankOrComment(l) {
			content = append(content, l)
		}
	}
	if len(content) == 0 {
		return nil
	}
	first := strings.TrimLeft(content[0], " \t")
	if first == "-" || strings.HasPrefix(first, "- ") {
		base := indentOf(content[0])
		var list []any
		for _, l := range content {
			t := strings.TrimLeft(l, " \t")
			if indentOf(l) != base || !(t == "-" || strings.HasPrefix(t, "- ")) {
				continue // nested structures inside items are not supported
			}
			item := strings.TrimSpace(strings.TrimPrefix(t, "-"))
			if item == "" {
				list = append(list, nil)
				continue
			}
			v, _ := parseInlineValue(item, nil)
			list = append(list, v)
		}
		return list
	}
	// Nested keys, one level: re-parse the dedented lines.
	base := indentOf(content[0])
	var sub []string
	for _, l := range block {
		if indentOf(l) >= base {
			sub = append(sub, l[base:])
		} else {
			sub = append(sub, strings.TrimLeft(l, " \t"))
		}
	}
	return map[string]any(ParseYAMLSubset(strings.Join(sub, "\n")))
}

// blockScalar renders a `|` or `>` block (with optional chomping `-`/`+`).
func blockScalar(indicator string, block []string) string {
	// Drop trailing blank lines; remember them for keep chomping.
	trailing := 0
	for len(block) > 0 && strings.TrimSpace(block[len(block)-1]) == "" {
		block = block[:len(block)-1]
		trailing++
	}
	base := -1
	for _, l := range block {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := indentOf(l); base < 0 || n < base {
			base = n
		}
	}
	lines := make([]string, len(block))
	for i, l := range block {
		if len(l) >= base && base >= 0 {
			lines[i] = l[base:]
		} else {
			lines[i] = ""
		}
	}
	var text string
	if indicator[0] == '|' {
		text = strings.Join(lines, "\n")
	} else {
		// Folded: lines of a paragraph join with spaces; each blank line
		// becomes a line break.
		var b strings.Builder
		prevText := false
		for _, l := range lines {
			switch {
			case l == "":
				b.WriteByte('\n')
				prevText = false
			case prevText:
				b.WriteByte(' ')
				b.WriteString(l)
			default:
				b.WriteString(l)
				prevText = true
			}
		}
		text = b.String()
	}
	switch {
	case strings.Contains(indicator, "-"):
		return text
	case strings.Contains(indicator, "+"):
		return text + strings.Repeat("\n", trailing+1)
	default:
		if text == "" {
			return ""
		}
		return text + "\n"
	}
}

// parseInlineValue reads the value after `key: `. Quoted strings may span
// following lines (more holds them); it returns how many of those it used.
func parseInlineValue(s string, more []string) (any, int) {
	switch s[0] {
	case '"', '\'':
		joined := s
		used := 0
		for {
			if v, n, ok := readQuoted(joined); ok {
				_ = n
				return v, used
			}
			if used >= len(more) {
				break
			}
			// Multi-line quoted scalars fold line breaks into spaces.
			joined += " " + strings.TrimSpace(more[used])
			used++
		}
		return strings.Trim(s, `"'`), 0
	case '[':
		if end := matchingBracket(s); end > 0 {
			return parseFlowList(s[1:end]), 0
		}
		// Flow lists spread over lines.
		joined := s
		for used := 0; used < len(more); used++ {
			joined += " " + strings.TrimSpace(more[used])
			if end := matchingBracket(joined); end > 0 {
				return parseFlowList(joined[1:end]), used + 1
			}
		}
		return s, 0
	}
	return plainScalar(stripComment(s)), 0
}

// matchingBracket returns the index of the "]" closing s[0]=="[", outside
// quotes, or -1.
func matchingBracket(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			quote = c
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func parseFlowList(inner string) []any {
	list := []any{}
	if strings.TrimSpace(inner) == "" {
		return list
	}
	for _, item := range splitTopLevel(inner, ',') {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if item[0] == '"' || item[0] == '\'' {
			if v, _, ok := readQuoted(item); ok {
				list = append(list, v)
				continue
			}
		}
		if item[0] == '[' {
			if end := matchingBracket(item); end > 0 {
				list = append(list, parseFlowList(item[1:end]))
				continue
			}
		}
		list = append(list, plainScalar(item))
	}
	return list
}

// splitTopLevel splits s on sep outside quotes, (), [] and {}.
func splitTopLevel(s string, sep byte) []string {
	var parts []string
	depth := 0
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			quote = c
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case sep:
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// readQuoted reads a quoted scalar at the start of s, returning its value
// and the number of bytes it used.
func readQuoted(s string) (string, int, bool) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		if q == '\'' {
			if c == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				return b.String(), i + 1, true
			}
			b.WriteByte(c)
			continue
		}
		switch c {
		case '"':
			return b.String(), i + 1, true
		case '\\':
			if i+1 >= len(s) {
				return "", 0, false
			}
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'u', 'U', 'x':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if i+n < len(s) {
					if r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32); err == nil {
						b.WriteRune(rune(r))
						i += n
						continue
					}
				}
				b.WriteByte('\\')
				b.WriteByte(e)
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'v':
				b.WriteByte('\v')
			case 'f':
				b.WriteByte('\f')
			case 'e':
				b.WriteByte(0x1b)
			case '"', '\\', '/', ' ', '\t':
				b.WriteByte(e)
			default:
				// Not a YAML escape (YAML would reject it): keep it as
				// written, which is what a regular expression such as
				// "\s+" in a condition means.
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

// stripComment removes a trailing " # comment" from a plain scalar.
func stripComment(s string) string {
	for i := 1; i < len(s); i++ {
		if s[i] == '#' && (s[i-1] == ' ' || s[i-1] == '\t') {
			return strings.TrimSpace(s[:i])
		}
	}
	return strings.TrimSpace(s)
}

func plainScalar(s string) any {
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		return true
	case "false", "no", "off":
		return false
	case "null", "~", "":
		return nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	if looksNumeric(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return s
}

func looksNumeric(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return false
		}
	}
	return true
}

// String returns the value of key as a string: strings as they are, other
// scalars formatted, lists joined with ", ". Absent or null: "".
func (fm Frontmatter) String(key string) string {
	v, ok := fm[key]
	if !ok || v == nil {
		return ""
	}
	return scalarString(v)
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			if e != nil {
				parts = append(parts, scalarString(e))
			}
		}
		return strings.Join(parts, ", ")
	}
	return ""
}

// Bool returns the value of key as a boolean; the strings "true"/"false"
// count too. Absent or anything else: def.
func (fm Frontmatter) Bool(key string, def bool) bool {
	switch x := fm[key].(type) {
	case bool:
		return x
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "on":
			return true
		case "false", "no", "off":
			return false
		}
	}
	return def
}

// Strings returns the value of key as a list of strings: a list as it is, a
// single scalar as one element. Empty elements are dropped.
func (fm Frontmatter) Strings(key string) []string {
	v, ok := fm[key]
	if !ok || v == nil {
		return nil
	}
	var out []string
	if list, ok := v.([]any); ok {
		for _, e := range list {
			if e == nil {
				continue
			}
			if s := scalarString(e); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	if s := scalarString(v); s != "" {
		out = append(out, s)
	}
	return out
}

// Has reports whether key is present.
func (fm Frontmatter) Has(key string) bool {
	_, ok := fm[key]
	return ok
}
