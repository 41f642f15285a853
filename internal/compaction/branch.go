package compaction

import (
	"context"
	"errors"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/session"
)

// ErrNoBranchContent is returned when the abandoned branch has nothing to
// summarise.
var ErrNoBranchContent = errors.New("No content to summarize")

// BranchPreparation is what a branch summary covers.
type BranchPreparation struct {
	CommonAncestorID string // "" when the branches share no entry
	Entries          []*session.Entry
	Messages         []ai.Message
	ReadFiles        []string
	ModifiedFiles    []string
}

// PrepareBranch collects the entries from oldPath's leaf back to the
// deepest entry it shares with targetPath (exclusive), oldest first, and
// the messages a summary reads, newest first within budgetTokens.
func PrepareBranch(oldPath, targetPath []*session.Entry, budgetTokens int) *BranchPreparation {
	onTarget := make(map[string]bool, len(targetPath))
	for _, e := range targetPath {
		onTarget[e.ID] = true
	}
	p := &BranchPreparation{}
	i := len(oldPath) - 1
	for ; i >= 0; i-- {
		if onTarget[oldPath[i].ID] {
			p.CommonAncestorID = oldPath[i].ID
			break
		}
	}
	p.Entries = append(p.Entries, oldPath[i+1:]...)

	var msgs []ai.Message
	var details []*Details
	total := 0
	for j := len(p.Entries) - 1; j >= 0; j-- {
		e := p.Entries[j]
		var m ai.Message
		switch e.Type {
		case session.TypeMessage:
			switch e.Role() {
			case ai.RoleToolResult, ai.RoleCustom, ai.RoleSystem, "":
			default:
				m = e.Message()
			}
		case session.TypeCompaction:
			m = &ai.CompactionSummaryMessage{Role: ai.RoleCompactionSummary, Summary: e.Summary, TokensBefore: e.TokensBefore}
			if d := prevDetails(e); d != nil {
				details = append(details, d)
			}
		case session.TypeBranchSummary:
			if e.Summary != "" {
				from := e.FromID
				m = &ai.BranchSummaryMessage{Role: ai.RoleBranchSummary, Summary: e.Summary, FromID: &from}
			}
			if d := prevDetails(e); d != nil {
				details = append(details, d)
			}
		case session.TypeCustomMessage:
			m = messageOf(e)
		}
		if m == nil {
			continue
		}
		t := EstimateTokens(m)
		if budgetTokens > 0 && total+t > budgetTokens {
			_, isSummary := m.(*ai.CompactionSummaryMessage)
			_, isBranch := m.(*ai.BranchSummaryMessage)
			if !(isSummary || isBranch) || float64(total) >= 0.9*float64(budgetTokens) {
				break
			}
		}
		total += t
		msgs = append(msgs, m)
	}
	for l, r := 0, len(msgs)-1; l < r; l, r = l+1, r-1 {
		msgs[l], msgs[r] = msgs[r], msgs[l]
	}
	p.Messages = msgs
	var merged *Details
	if len(details) > 0 {
		merged = &Details{}
		for _, d := range details {
			merged.ReadFiles = append(merged.ReadFiles, d.ReadFiles...)
			merged.ModifiedFiles = append(merged.ModifiedFiles, d.ModifiedFiles...)
		}
	}
	p.ReadFiles, p.ModifiedFiles = fileOps(msgs, merged)
	return p
}

// SummarizeBranch writes the summary of an abandoned branch. With
// replaceInstructions the custom instructions replace our prompt.
func SummarizeBranch(ctx context.Context, m Model, p *BranchPreparation, customInstructions string, replaceInstructions bool) (string, *ai.Usage, error) {
	if len(p.Messages) == 0 {
		return "", nil, ErrNoBranchContent
	}
	var b strings.Builder
	b.WriteString("<conversation>\n" + Serialize(p.Messages) + "\n</conversation>\n\n")
	switch {
	case replaceInstructions && customInstructions != "":
		b.WriteString(customInstructions)
	case customInstructions != "":
		b.WriteString(branchFormat + "\n\nAdditional focus: " + customInstructions)
	default:
		b.WriteString(branchFormat)
	}
	text, usage, err := call(ctx, m, b.String(), 2048)
	if err != nil {
		return "", nil, err
	}
	return BranchPreamble + text + fileTags(p.ReadFiles, p.ModifiedFiles), usage, nil
}
