package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed ls.md
var lsDescription string

const lsDefaultLimit = 500

type lsTool struct{ env Env }

func (t *lsTool) Name() string        { return "ls" }
func (t *lsTool) Description() string { return strings.TrimSpace(lsDescription) }
func (t *lsTool) Parameters() json.RawMessage {
	return objectSchema(
		prop{"path", typed("string", "Directory to list (default: the working directory)"), false},
		prop{"limit", typed("number", "Maximum number of entries to return (default: 500)"), false},
	)
}

type lsDetails struct {
	Truncation        *Truncation `json:"truncation,omitempty"`
	EntryLimitReached int         `json:"entryLimitReached,omitempty"`
}

func (t *lsTool) Execute(ctx context.Context, call Call) (Result, error) {
	a, err := parseArgs("ls", call.Args)
	if err != nil {
		return errResult(err), nil
	}
	dir, _, err := a.str("path", false)
	if err != nil {
		return errResult(err), nil
	}
	limit, hasLimit, err := a.integer("limit")
	if err != nil {
		return errResult(err), nil
	}
	if !hasLimit {
		limit = lsDefaultLimit
	}
	limit = max(1, limit)
	if ctx.Err() != nil {
		return ErrorResult("Operation aborted"), nil
	}
	if dir == "" {
		dir = "."
	}
	abs := resolvePath(dir, t.env.Cwd)
	st, err := os.Stat(abs)
	if err != nil {
		return ErrorResult("Path not found: " + abs), nil
	}
	if !st.IsDir() {
		return ErrorResult("Not a directory: " + abs), nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return ErrorResult("Cannot read directory: " + err.Error()), nil
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	sort.SliceStable(names, func(i, j int) bool {
		li, lj := strings.ToLower(names[i]), strings.ToLower(names[j])
		if li != lj {
			return li < lj
		}
		return names[i] < names[j]
	})
	var results []string
	limitReached := false
	for _, name := range names {
		if len(results) >= limit {
			limitReached = true
			break
		}
		est, err := os.Stat(filepath.Join(abs, name)) // follows links, like pi
		if err != nil {
			continue
		}
		if est.IsDir() {
			name += "/"
		}
		results = append(results, name)
	}
	if len(results) == 0 {
		return TextResult("(empty directory)"), nil
	}
	tr := TruncateHead(strings.Join(results, "\n"), int(^uint(0)>>1), DEFAULT_MAX_BYTES)
	var det lsDetails
	var notices []string
	if limitReached {
		notices = append(notices, fmt.Sprintf("%d entries limit reached. Use limit=%d for more", limit, limit*2))
		det.EntryLimitReached = limit
	}
	if tr.Truncated {
		notices = append(notices, FormatSize(DEFAULT_MAX_BYTES)+" limit reached")
		det.Truncation = &tr
	}
	if len(notices) == 0 {
		return TextResult(tr.Content), nil
	}
	res := TextResult(tr.Content + "\n\n[" + strings.Join(notices, ". ") + "]")
	res.Details = details(det)
	return res, nil
}
