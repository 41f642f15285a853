package tools

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// textEdit is one replacement of the edit tool.
type textEdit struct {
	OldText string
	NewText string
}

const utf8BOM = "\uFEFF"

// stripBOM removes a leading byte order mark and returns it separately.
func stripBOM(s string) (bom, rest string) {
	if strings.HasPrefix(s, utf8BOM) {
		return utf8BOM, s[len(utf8BOM):]
	}
	return "", s
}

// detectLineEnding reports "\r\n" when the first line break is CRLF.
func detectLineEnding(s string) string {
	lf := strings.IndexByte(s, '\n')
	if lf < 0 {
		return "\n"
	}
	crlf := strings.Index(s, "\r\n")
	if crlf >= 0 && crlf < lf {
		return "\r\n"
	}
	return "\n"
}

func normalizeToLF(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

func restoreLineEndings(s, ending string) string {
	if ending == "\r\n" {
		return strings.ReplaceAll(s, "\n", "\r\n")
	}
	return s
}

// isJSSpace is JavaScript's notion of white space for String.trimEnd.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0xFEFF, 0x2028, 0x2029:
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

var fuzzyReplacer = strings.NewReplacer(
	// smart single quotes
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'",
	// smart double quotes
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`,
	// dashes and minus
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	// special spaces
	"\u00A0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ",
	"\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
)

// normalizeForFuzzyMatch applies NFKC, strips trailing white space from every
// line and maps typographic quotes, dashes and spaces to ASCII.
func normalizeForFuzzyMatch(s string) string {
	s = norm.NFKC.String(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, isJSSpace)
	}
	return fuzzyReplacer.Replace(strings.Join(lines, "\n"))
}

type fuzzyMatch struct {
	found      bool
	index      int
	length     int
	usedFuzzy  bool
	newContent string // the content the index refers to
}

// fuzzyFind looks for old in content exactly, then in fuzzy-normalised space.
func fuzzyFind(content, old string) fuzzyMatch {
	if i := strings.Index(content, old); i >= 0 {
		return fuzzyMatch{found: true, index: i, length: len(old), newContent: content}
	}
	fc, fo := normalizeForFuzzyMatch(content), normalizeForFuzzyMatch(old)
	if i := strings.Index(fc, fo); i >= 0 {
		return fuzzyMatch{found: true, index: i, length: len(fo), usedFuzzy: true, newContent: fc}
	}
	return fuzzyMatch{newContent: content}
}

func countFuzzyOccurrences(content, old string) int {
	return strings.Count(normalizeForFuzzyMatch(content), normalizeForFuzzyMatch(old))
}

// applyEdits applies edits to LF-normalised content. Every edit is matched
// against the original content; when any edit needs the fuzzy match, all of
// them are applied in fuzzy-normalised space and that becomes the base.
func applyEdits(content string, edits []textEdit, path string) (base, result string, err error) {
	n := len(edits)
	norm := make([]textEdit, n)
	for i, e := range edits {
		norm[i] = textEdit{normalizeToLF(e.OldText), normalizeToLF(e.NewText)}
		if norm[i].OldText == "" {
			if n == 1 {
				return "", "", fmt.Errorf("oldText must not be empty in %s.", path)
			}
			return "", "", fmt.Errorf("edits[%d].oldText must not be empty in %s.", i, path)
		}
	}
	base = content
	for _, e := range norm {
		if fuzzyFind(content, e.OldText).usedFuzzy {
			base = normalizeForFuzzyMatch(content)
			break
		}
	}
	type matched struct {
		edit, index, length int
		newText             string
	}
	var ms []matched
	for i, e := range norm {
		m := fuzzyFind(base, e.OldText)
		if !m.found {
			if n == 1 {
				return "", "", fmt.Errorf("Could not find the exact text in %s. The old text must match exactly including all whitespace and newlines.", path)
			}
			return "", "", fmt.Errorf("Could not find edits[%d] in %s. The oldText must match exactly including all whitespace and newlines.", i, path)
		}
		if occ := countFuzzyOccurrences(base, e.OldText); occ > 1 {
			if n == 1 {
				return "", "", fmt.Errorf("Found %d occurrences of the text in %s. The text must be unique. Please provide more context to make it unique.", occ, path)
			}
			return "", "", fmt.Errorf("Found %d occurrences of edits[%d] in %s. Each oldText must be unique. Please provide more context to make it unique.", occ, i, path)
		}
		ms = append(ms, matched{i, m.index, m.length, e.NewText})
	}
	sort.SliceStable(ms, func(a, b int) bool { return ms[a].index < ms[b].index })
	for i := 1; i < len(ms); i++ {
		prev, cur := ms[i-1], ms[i]
		if prev.index+prev.length > cur.index {
			return "", "", fmt.Errorf("edits[%d] and edits[%d] overlap in %s. Merge them into one edit or target disjoint regions.", prev.edit, cur.edit, path)
		}
	}
	var b strings.Builder
	pos := 0
	for _, m := range ms {
		b.WriteString(base[pos:m.index])
		b.WriteString(m.newText)
		pos = m.index + m.length
	}
	b.WriteString(base[pos:])
	result = b.String()
	if result == base {
		if n == 1 {
			return "", "", fmt.Errorf("No changes made to %s. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.", path)
		}
		return "", "", fmt.Errorf("No changes made to %s. The replacements produced identical content.", path)
	}
	return base, result, nil
}
