package tui

import (
	"strings"
	"sync"
	"unicode"
)

// A small highlighter for code blocks: keywords, strings, numbers and line
// comments of common languages. The keyword tables are built on first use.
var (
	kwOnce   sync.Once
	keywords map[string]map[string]bool
	aliases  = map[string]string{
		"golang": "go", "js": "javascript", "jsx": "javascript", "ts": "typescript", "tsx": "typescript",
		"py": "python", "sh": "bash", "shell": "bash", "zsh": "bash", "rs": "rust", "c++": "cpp",
		"cc": "cpp", "h": "c", "hpp": "cpp", "yml": "yaml",
	}
)

func loadKeywords() {
	words := map[string]string{
		"go":         "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false",
		"javascript": "async await break case catch class const continue debugger default delete do else export extends finally for function if import in instanceof let new null return super switch this throw true false try typeof undefined var void while with yield of",
		"typescript": "abstract any as async await boolean break case catch class const continue declare default delete do else enum export extends finally for from function if implements import in instanceof interface let new null number private protected public readonly return string super switch this throw true false try type typeof undefined var void while",
		"python":     "and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield self",
		"bash":       "if then else elif fi case esac for while until do done in function return local export echo exit set unset",
		"rust":       "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while",
		"c":          "auto break case char const continue default do double else enum extern float for goto if int long register return short signed sizeof static struct switch typedef union unsigned void volatile while NULL",
		"cpp":        "auto bool break case catch char class const constexpr continue default delete do double else enum explicit false float for friend if inline int long namespace new nullptr operator private protected public return short signed sizeof static struct switch template this throw true try typedef typename union unsigned using virtual void while",
		"java":       "abstract boolean break byte case catch char class const continue default do double else enum extends final finally float for if implements import instanceof int interface long new null package private protected public return short static super switch this throw throws true false try void while",
		"json":       "true false null",
		"yaml":       "true false null",
	}
	keywords = map[string]map[string]bool{}
	for lang, ws := range words {
		set := map[string]bool{}
		for _, w := range strings.Fields(ws) {
			set[w] = true
		}
		keywords[lang] = set
	}
}

func lineComment(lang string) string {
	switch lang {
	case "python", "bash", "yaml":
		return "#"
	case "json", "":
		return ""
	}
	return "//"
}

// highlight styles one line of code in lang ("" or unknown: plain code
// colour).
func highlight(line, lang string, th *Theme) string {
	lang = strings.ToLower(lang)
	if a, ok := aliases[lang]; ok {
		lang = a
	}
	kwOnce.Do(loadKeywords)
	kw := keywords[lang]
	if kw == nil {
		return th.Code.Render(line)
	}
	comment := lineComment(lang)
	var b strings.Builder
	rs := []rune(line)
	plain := func(s string) {
		if s != "" {
			b.WriteString(s)
		}
	}
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case comment != "" && strings.HasPrefix(string(rs[i:]), comment):
			b.WriteString(th.Comment.Render(string(rs[i:])))
			return b.String()
		case r == '"' || r == '\'' || r == '`':
			j := i + 1
			for j < len(rs) && rs[j] != r {
				if rs[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(rs))
			b.WriteString(th.String.Render(string(rs[i:j])))
			i = j
		case unicode.IsLetter(r) || r == '_':
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || rs[j] == '_') {
				j++
			}
			w := string(rs[i:j])
			if kw[w] {
				b.WriteString(th.Keyword.Render(w))
			} else {
				plain(w)
			}
			i = j
		case unicode.IsDigit(r):
			j := i
			for j < len(rs) && (unicode.IsDigit(rs[j]) || rs[j] == '.' || rs[j] == 'x' || unicode.Is(unicode.ASCII_Hex_Digit, rs[j])) {
				j++
			}
			b.WriteString(th.String.Render(string(rs[i:j])))
			i = j
		default:
			plain(string(r))
			i++
		}
	}
	return b.String()
}
