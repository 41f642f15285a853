package compaction

import (
	"encoding/json"
	"errors"
	"sort"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/session"
)

// Errors of a manual compaction (pi's texts).
var (
	ErrAlreadyCompacted = errors.New("Already compacted")
	ErrNothingToCompact = errors.New("Nothing to compact (session too small)")
)

// Preparation is what a compaction will summarise and keep.
type Preparation struct {
	FirstKeptEntryID string
	// ToSummarize is the history before the cut (or before the turn the
	// cut splits).
	ToSummarize []ai.Message
	// TurnPrefix is the start of a turn the cut splits (empty otherwise).
	TurnPrefix      []ai.Message
	IsSplitTurn     bool
	PreviousSummary string
	TokensBefore    int64
	ReadFiles       []string
	ModifiedFiles   []string
}

// Details is the details member of a compaction or branch_summary entry
// that Pisces generated.
type Details struct {
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
}

// isCutPoint reports whether the history may be cut before e (never before
// a tool result: it must stay with its call).
func isCutPoint(e *session.Entry) bool {
	switch e.Type {
	case session.TypeBranchSummary, session.TypeCustomMessage:
		return true
	case session.TypeMessage:
		switch e.Role() {
		case ai.RoleUser, ai.RoleAssistant, ai.RoleBashExecution, ai.RoleCustom,
			ai.RoleBranchSummary, ai.RoleCompactionSummary:
			return true
		}
	}
	return false
}

// isTurnStart reports whether e starts a turn (a message from the user's
// side).
func isTurnStart(e *session.Entry) bool {
	switch e.Type {
	case session.TypeBranchSummary, session.TypeCustomMessage:
		return true
	case session.TypeMessage:
		switch e.Role() {
		case ai.RoleUser, ai.RoleBashExecution, ai.RoleCustom, ai.RoleBranchSummary, ai.RoleCompactionSummary:
			return true
		}
	}
	return false
}

// messageOf returns the context message an entry contributes (nil for none).
func messageOf(e *session.Entry) ai.Message {
	switch e.Type {
	case session.TypeMessage:
		if e.Message() == nil || e.Message().MessageRole() == ai.RoleSystem {
			return nil
		}
		return e.Message()
	case session.TypeCustomMessage:
		return &ai.CustomMessage{Role: ai.RoleCustom, CustomType: e.CustomType, Content: e.Content, Display: e.Display}
	case session.TypeBranchSummary:
		if e.Summary == "" {
			return nil
		}
		from := e.FromID
		return &ai.BranchSummaryMessage{Role: ai.RoleBranchSummary, Summary: e.Summary, FromID: &from}
	}
	return nil
}

func messagesOf(entries []*session.Entry) []ai.Message {
	var out []ai.Message
	for _, e := range entries {
		if m := messageOf(e); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// Prepare finds the cut point on the branch path (root → leaf) so that
// about keepRecentTokens of recent messages are kept. context is the
// current model context (for tokensBefore).
func Prepare(path []*session.Entry, context []ai.Message, keepRecentTokens int) (*Preparation, error) {
	if len(path) > 0 && path[len(path)-1].Type == session.TypeCompaction {
		return nil, ErrAlreadyCompacted
	}
	path = withoutHidden(path)
	if len(path) == 0 {
		return nil, ErrNothingToCompact
	}
	prevIdx := -1
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == session.TypeCompaction {
			prevIdx = i
			break
		}
	}
	start := 0
	var prev *session.Entry
	if prevIdx >= 0 {
		prev = path[prevIdx]
		start = prevIdx + 1
		for i := 0; i < prevIdx; i++ {
			if path[i].ID == prev.FirstKeptEntryID {
				start = i
				break
			}
		}
	}
	end := len(path)
	cut, turnStart := findCut(path, start, end, keepRecentTokens)
	p := &Preparation{TokensBefore: EstimateContext(context).Tokens}
	if prev != nil {
		p.PreviousSummary = prev.Summary
	}
	historyEnd := cut
	if turnStart >= 0 {
		historyEnd = turnStart
		p.IsSplitTurn = true
		p.TurnPrefix = messagesOf(withoutCompactions(path[turnStart:cut]))
	}
	if historyEnd > start {
		p.ToSummarize = messagesOf(withoutCompactions(path[start:historyEnd]))
	}
	if len(p.ToSummarize) == 0 && len(p.TurnPrefix) == 0 {
		return nil, ErrNothingToCompact
	}
	if cut >= len(path) {
		return nil, ErrNothingToCompact
	}
	p.FirstKeptEntryID = path[cut].ID
	p.ReadFiles, p.ModifiedFiles = fileOps(append(append([]ai.Message(nil), p.ToSummarize...), p.TurnPrefix...), prevDetails(prev))
	return p, nil
}

// withoutHidden drops the context_edit entries of a path and the entries
// they hide (the latest edit of a target wins), so that a message left out
// of the context is not summarised either.
func withoutHidden(path []*session.Entry) []*session.Entry {
	hidden := map[string]bool{}
	edited := false
	for _, e := range path {
		if e.Type == session.TypeContextEdit {
			hidden[e.TargetID] = e.Replacement == nil
			edited = true
		}
	}
	if !edited {
		return path
	}
	out := make([]*session.Entry, 0, len(path))
	for _, e := range path {
		if e.Type != session.TypeContextEdit && !hidden[e.ID] {
			out = append(out, e)
		}
	}
	return out
}

func withoutCompactions(es []*session.Entry) []*session.Entry {
	out := make([]*session.Entry, 0, len(es))
	for _, e := range es {
		if e.Type != session.TypeCompaction {
			out = append(out, e)
		}
	}
	return out
}

// findCut returns the index of the first kept entry and, when the cut
// splits a turn, the index of that turn's start (-1 otherwise).
func findCut(path []*session.Entry, start, end, keepRecent int) (int, int) {
	var cuts []int
	for i := start; i < end; i++ {
		if isCutPoint(path[i]) {
			cuts = append(cuts, i)
		}
	}
	if len(cuts) == 0 {
		return start, -1
	}
	cut := cuts[0]
	acc := 0
	for i := end - 1; i >= start; i-- {
		m := messageOf(path[i])
		if path[i].Type != session.TypeMessage || m == nil {
			continue
		}
		acc += EstimateTokens(m)
		if acc >= keepRecent {
			for _, c := range cuts {
				if c >= i {
					cut = c
					break
				}
			}
			break
		}
	}
	// Keep the settings entries just before the cut with it.
	for cut > start {
		t := path[cut-1].Type
		if t == session.TypeMessage || t == session.TypeCompaction {
			break
		}
		cut--
	}
	if isTurnStart(path[cut]) {
		return cut, -1
	}
	for i := cut - 1; i >= start; i-- {
		if isTurnStart(path[i]) {
			return cut, i
		}
	}
	return cut, -1
}

func prevDetails(prev *session.Entry) *Details {
	if prev == nil || len(prev.Details) == 0 || (prev.FromHook != nil && *prev.FromHook) {
		return nil
	}
	var d Details
	if json.Unmarshal(prev.Details, &d) != nil {
		return nil
	}
	return &d
}

// fileOps collects the files read and modified by tool calls, plus those of
// an earlier generated summary.
func fileOps(msgs []ai.Message, prev *Details) (read, modified []string) {
	r, w := map[string]bool{}, map[string]bool{}
	if prev != nil {
		for _, f := range prev.ReadFiles {
			r[f] = true
		}
		for _, f := range prev.ModifiedFiles {
			w[f] = true
		}
	}
	for _, m := range msgs {
		a, ok := m.(*ai.AssistantMessage)
		if !ok {
			continue
		}
		for _, tc := range a.ToolCalls() {
			var args struct {
				Path     string `json:"path"`
				FilePath string `json:"file_path"`
			}
			_ = json.Unmarshal(tc.Arguments, &args)
			p := args.Path
			if p == "" {
				p = args.FilePath
			}
			if p == "" {
				continue
			}
			switch tc.Name {
			case "read":
				r[p] = true
			case "write", "edit":
				w[p] = true
			}
		}
	}
	for f := range r {
		if !w[f] {
			read = append(read, f)
		}
	}
	for f := range w {
		modified = append(modified, f)
	}
	sort.Strings(read)
	sort.Strings(modified)
	if read == nil {
		read = []string{}
	}
	if modified == nil {
		modified = []string{}
	}
	return read, modified
}
