package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

//go:embed find.md
var findDescription string

const findDefaultLimit = 1000

type findTool struct{ env Env }

func (t *findTool) Name() string        { return "find" }
func (t *findTool) Description() string { return strings.TrimSpace(findDescription) }
func (t *findTool) Parameters() json.RawMessage {
	return objectSchema(
		prop{"pattern", typed("string", "Glob pattern to match, e.g. '*.go', '**/*.json' or 'src/**/*_test.go'"), true},
		prop{"path", typed("string", "Directory to search in (default: the working directory)"), false},
		prop{"limit", typed("number", "Maximum number of results (default: 1000)"), false},
	)
}

type findDetails struct {
	Truncation         *Truncation `json:"truncation,omitempty"`
	ResultLimitReached int         `json:"resultLimitReached,omitempty"`
}

func (t *findTool) Execute(ctx context.Context, call Call) (Result, error) {
	a, err := parseArgs("find", call.Args)
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
	limit, hasLimit, err := a.integer("limit")
	if err != nil {
		return errResult(err), nil
	}
	if !hasLimit {
		limit = findDefaultLimit
	}
	limit = max(1, limit)
	if searchDir == "" {
		searchDir = "."
	}
	root := resolvePath(searchDir, t.env.Cwd)
	st, err := os.Stat(root)
	if err != nil {
		return ErrorResult("Path not found: " + root), nil
	}
	if !st.IsDir() {
		return ErrorResult("Not a directory: " + root), nil
	}
	g, err := compilePathGlob(pattern)
	if err != nil {
		return ErrorResult(fmt.Sprintf("Invalid glob %q: %v", pattern, err)), nil
	}
	var results []string
	size := 0
	err = walkFiles(ctx, root, func(rel string, d fs.DirEntry) error {
		if d.Type()&(fs.ModeDevice|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeIrregular) != 0 {
			return nil // devices, FIFOs and sockets are not listed
		}
		if !g.match(rel) {
			return nil
		}
		if d.IsDir() {
			rel += "/"
		}
		results = append(results, rel)
		size += len(rel) + 1
		if len(results) >= limit || size > DEFAULT_MAX_BYTES {
			// more could not be shown within the output limit
			return errStopWalk
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ErrorResult("Operation aborted"), nil
		}
		return ErrorResult(err.Error()), nil
	}
	if len(results) == 0 {
		return TextResult("No files found matching pattern"), nil
	}
	tr := TruncateHead(strings.Join(results, "\n"), int(^uint(0)>>1), DEFAULT_MAX_BYTES)
	var det findDetails
	var notices []string
	if len(results) >= limit {
		notices = append(notices, fmt.Sprintf("%d results limit reached. Use limit=%d for more, or refine pattern", limit, limit*2))
		det.ResultLimitReached = limit
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
