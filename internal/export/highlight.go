package export

import (
	"html"
	"strings"
)

// A small syntax highlighter for code blocks: comments, strings, numbers
// and keywords for the common language families, and added / removed lines
// for diffs. Everything it writes is escaped; the classes are styled by the
// page's CSS.

type lang struct {
	line     []string // line comment openers
	block    [][2]string
	quotes   string // string delimiters
	triple   bool   // """ and ''' strings (Python)
	keywords map[string]bool
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var (
	cLike = [][2]string{{"/*", "*/"}}
	langs = map[string]*lang{
		"go": {line: []string{"//"}, block: cLike, quotes: "\"'`", keywords: words(
			"break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota any error string int int64 int32 uint byte rune bool float64 make new len cap append")},
		"js": {line: []string{"//"}, block: cLike, quotes: "\"'`", keywords: words(
			"async await break case catch class const continue debugger default delete do else export extends false finally for from function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while yield interface type enum implements readonly as")},
		"python": {line: []string{"#"}, quotes: "\"'", triple: true, keywords: words(
			"and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield self")},
		"shell": {line: []string{"#"}, quotes: "\"'", keywords: words(
			"if then else elif fi for while until do done case esac in function return export local echo cd exit set unset source")},
		"rust": {line: []string{"//"}, block: cLike, quotes: "\"", keywords: words(
			"as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err")},
		"c": {line: []string{"//"}, block: cLike, quotes: "\"'", keywords: words(
			"auto break case catch char class const continue default delete do double else enum extern false final float for friend goto if inline int long namespace new null nullptr override private protected public return short signed sizeof static struct switch template this throw true try typedef union unsigned using virtual void volatile while import package boolean extends implements interface var val fun when object")},
		"ruby": {line: []string{"#"}, quotes: "\"'", keywords: words(
			"begin break case class def do else elsif end ensure false for if in module next nil not or redo rescue retry return self super then true undef unless until when while yield require")},
		"sql": {line: []string{"--"}, block: cLike, quotes: "'\"", keywords: words(
			"select from where insert into values update set delete create table drop alter index join left right inner outer on group by order having limit offset as and or not null is in like distinct union all primary key references SELECT FROM WHERE INSERT INTO VALUES UPDATE SET DELETE CREATE TABLE DROP ALTER INDEX JOIN LEFT RIGHT INNER OUTER ON GROUP BY ORDER HAVING LIMIT OFFSET AS AND OR NOT NULL IS IN LIKE DISTINCT UNION ALL PRIMARY KEY REFERENCES")},
		"yaml": {line: []string{"#"}, quotes: "\"'", keywords: words("true false null yes no")},
		"json": {quotes: "\"", keywords: words("true false null")},
		"css":  {block: cLike, quotes: "\"'"},
		"html": {block: [][2]string{{"<!--", "-->"}}, quotes: "\"'"},
	}
	aliases = map[string]string{
		"golang": "go", "javascript": "js", "jsx": "js", "ts": "js", "typescript": "js", "tsx": "js", "mjs": "js", "cjs": "js",
		"py": "python", "python3": "python", "sh": "shell", "bash": "shell", "zsh": "shell", "console": "shell", "fish": "shell",
		"rs": "rust", "cpp": "c", "c++": "c", "cc": "c", "h": "c", "hpp": "c", "java": "c", "cs": "c", "csharp": "c", "kotlin": "c",
		"kt": "c", "swift": "c", "scala": "c", "rb": "ruby", "yml": "yaml", "toml": "yaml", "ini": "yaml", "jsonc": "json",
		"json5": "json", "xml": "html", "svg": "html", "scss": "css", "less": "css", "postgres": "sql", "mysql": "sql", "sqlite": "sql",
	}
)

// highlight returns code as escaped HTML with token spans.
func highlight(code, language string) string {
	language = strings.ToLower(strings.TrimSpace(language))
	if language == "diff" || language == "patch" {
		return highlightDiff(code)
	}
	if a, ok := aliases[language]; ok {
		language = a
	}
	l := langs[language]
	if l == nil {
		return html.EscapeString(code)
	}
	var b strings.Builder
	b.Grow(len(code) * 3 / 2)
	span := func(class, text string) {
		b.WriteString(`<span class="`)
		b.WriteString(class)
		b.WriteString(`">`)
		b.WriteString(html.EscapeString(text))
		b.WriteString(`</span>`)
	}
	i := 0
	plainStart := 0
	flush := func() {
		if plainStart < i {
			b.WriteString(html.EscapeString(code[plainStart:i]))
		}
	}
next:
	for i < len(code) {
		c := code[i]
		for _, lc := range l.line {
			if strings.HasPrefix(code[i:], lc) {
				flush()
				end := strings.IndexByte(code[i:], '\n')
				if end < 0 {
					end = len(code) - i
				}
				span("tok-c", code[i:i+end])
				i += end
				plainStart = i
				continue next
			}
		}
		for _, bc := range l.block {
			if strings.HasPrefix(code[i:], bc[0]) {
				flush()
				end := strings.Index(code[i+len(bc[0]):], bc[1])
				if end < 0 {
					end = len(code) - i
				} else {
					end += len(bc[0]) + len(bc[1])
				}
				span("tok-c", code[i:i+end])
				i += end
				plainStart = i
				continue next
			}
		}
		if strings.IndexByte(l.quotes, c) >= 0 {
			flush()
			end := stringEnd(code, i, l.triple)
			span("tok-s", code[i:end])
			i = end
			plainStart = i
			continue
		}
		if isDigit(c) && (i == 0 || !isWord(code[i-1])) {
			flush()
			j := i + 1
			for j < len(code) && (isWord(code[j]) || code[j] == '.') {
				j++
			}
			span("tok-n", code[i:j])
			i = j
			plainStart = i
			continue
		}
		if isWord(c) && (i == 0 || !isWord(code[i-1])) {
			j := i + 1
			for j < len(code) && isWord(code[j]) {
				j++
			}
			if l.keywords[code[i:j]] {
				flush()
				span("tok-k", code[i:j])
				plainStart = j
			}
			i = j
			continue
		}
		i++
	}
	flush()
	return b.String()
}

// stringEnd returns the index after the string literal starting at i.
func stringEnd(code string, i int, triple bool) int {
	q := code[i]
	if triple && strings.HasPrefix(code[i:], strings.Repeat(string(q), 3)) {
		end := strings.Index(code[i+3:], strings.Repeat(string(q), 3))
		if end < 0 {
			return len(code)
		}
		return i + 3 + end + 3
	}
	for j := i + 1; j < len(code); j++ {
		switch code[j] {
		case '\\':
			j++
		case q:
			return j + 1
		case '\n':
			if q != '`' {
				return j // unterminated: stop at the line end
			}
		}
	}
	return len(code)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWord(c byte) bool {
	return c == '_' || c == '$' || isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func highlightDiff(code string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(code, "\n") {
		class := ""
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			class = "tok-k"
		case strings.HasPrefix(line, "+"):
			class = "tok-add"
		case strings.HasPrefix(line, "-"):
			class = "tok-del"
		case strings.HasPrefix(line, "@@"):
			class = "tok-c"
		}
		if class == "" {
			b.WriteString(html.EscapeString(line))
			continue
		}
		b.WriteString(`<span class="` + class + `">` + html.EscapeString(line) + `</span>`)
	}
	return b.String()
}
