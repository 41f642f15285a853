package tools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

//go:embed grep.md
var grepDescription string

const grepDefaultLimit = 100

type grepTool struct{ env Env }

func (t *grepTool) Name() string        { return "grep" }
func (t *grepTool) Description() string { return strings.TrimSpace(grepDescription) }
func (t *grepTool) Parameters() json.RawMessage {
	return objectSchema(
		prop{"pattern", typed("string", "Regular expression (or literal text with literal=true) to search for"), true},
		prop{"path", typed("string", "Directory or file to search (default: the working directory)"), false},
		prop{"glob", typed("string", "Only search files matching this glob, e.g. '*.go' or 'internal/**/*_test.go'"), false},
		prop{"ignoreCase", typed("boolean", "Match without regard to case (default: false)"), false},
		prop{"literal", typed("boolean", "Treat pattern as literal text, not a regular expression (default: false)"), false},
		prop{"context", typed("number", "Lines of context to show before and after each match (default: 0)"), false},
		prop{"limit", typed("number", "Maximum number of matches to return (default: 100)"), false},
	)
}

type grepDetails struct {
	Truncation        *Truncation `json:"truncation,omitempty"`
	MatchLimitReached int         `json:"matchLimitReached,omitempty"`
	LinesTruncated    bool        `json:"linesTruncated,omitempty"`
}

func (t *grepTool) Execute(ctx context.Context, call Call) (Result, error) {
	a, err := parseArgs("grep", call.Args)
	if err != nil {
		return errResult(err), nil
	}
	pattern, _, err := a.str("pattern", true)
	if err != nil {
		return errResult(err), nil
	}
	searchDir, _, err := a.str("path", false)
	if err != nil {
		return errResult(err), nil
	}
	glob, _, err := a.str("glob", false)
	if err != nil {
		return errResult(err), nil
	}
	ignoreCase, err := a.boolean("ignoreCase")
	if err != nil {
		return errResult(err), nil
	}
	literal, err := a.boolean("literal")
	if err != nil {
		return errResult(err), nil
	}
	contextLines, _, err := a.integer("context")
	if err != nil {
		return errResult(err), nil
	}
	limit, hasLimit, err := a.integer("limit")
	if err != nil {
		return errResult(err), nil
	}
	if !hasLimit {
		limit = grepDefaultLimit
	}
	limit = max(1, limit)
	contextLines = max(0, contextLines)

	if searchDir == "" {
		searchDir = "."
	}
	root := resolvePath(searchDir, t.env.Cwd)
	st, err := os.Stat(root)
	if err != nil {
		return ErrorResult("Path not found: " + root), nil
	}
	expr := pattern
	if literal {
		expr = regexp.QuoteMeta(pattern)
	}
	if ignoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return ErrorResult("regex parse error: " + err.Error()), nil
	}
	var include *pathGlob
	exclude := false
	if glob != "" {
		g := glob
		if strings.HasPrefix(g, "!") {
			exclude, g = true, g[1:]
		}
		if include, err = compilePathGlob(g); err != nil {
			return ErrorResult(fmt.Sprintf("Invalid glob %q: %v", glob, err)), nil
		}
	}

	var out []string
	matches := 0
	linesTruncated := false
	limitReached := false
	search := func(abs, display string) error {
		data, err := os.ReadFile(abs)
		if err != nil || bytes.IndexByte(data, 0) >= 0 {
			return nil
		}
		text := strings.ToValidUTF8(string(data), "\uFFFD")
		text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
		lines := strings.Split(text, "\n")
		if strings.HasSuffix(text, "\n") {
			lines = lines[:len(lines)-1] // no line after the final newline
		}
		for i, line := range lines {
			if !re.MatchString(line) {
				continue
			}
			matches++
			from, to := max(0, i-contextLines), min(len(lines)-1, i+contextLines)
			for j := from; j <= to; j++ {
				cut, was := TruncateLine(lines[j], GREP_MAX_LINE_LENGTH)
				linesTruncated = linesTruncated || was
				if j == i {
					out = append(out, fmt.Sprintf("%s:%d: %s", display, j+1, cut))
				} else {
					out = append(out, fmt.Sprintf("%s-%d- %s", display, j+1, cut))
				}
			}
			if matches >= limit {
				limitReached = true
				return errStopWalk
			}
		}
		return nil
	}

	if !st.IsDir() {
		_ = search(root, filepath.Base(root))
	} else {
		err = walkFiles(ctx, root, func(rel string, d fs.DirEntry) error {
			if d.IsDir() {
				if exclude && include.match(rel) {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if include != nil && include.match(rel) == exclude {
				return nil
			}
			return search(filepath.Join(root, filepath.FromSlash(rel)), rel)
		})
		if err != nil {
			if ctx.Err() != nil {
				return ErrorResult("Operation aborted"), nil
			}
			return ErrorResult(err.Error()), nil
		}
	}
	if matches == 0 {
		return TextResult("No matches found"), nil
	}
	tr := TruncateHead(strings.Join(out, "\n"), int(^uint(0)>>1), DEFAULT_MAX_BYTES)
	text := tr.Content
	var det grepDetails
	var notices []string
	if limitReached {
		notices = append(notices, fmt.Sprintf("%d matches limit reached. Use limit=%d for more, or refine pattern", limit, limit*2))
		det.MatchLimitReached = limit
	}
	if tr.Truncated {
		notices = append(notices, FormatSize(DEFAULT_MAX_BYTES)+" limit reached")
		det.Truncation = &tr
	}
	if linesTruncated {
		notices = append(notices, fmt.Sprintf("Some lines truncated to %d chars. Use read tool to see full lines", GREP_MAX_LINE_LENGTH))
		det.LinesTruncated = true
	}
	res := TextResult(text)
	if len(notices) > 0 {
		res = TextResult(text + "\n\n[" + strings.Join(notices, ". ") + "]")
		res.Details = details(det)
	}
	return res, nil
}
