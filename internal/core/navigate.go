package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/compaction"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/rpc"
)

// NavigateOptions are navigate_tree's options.
type NavigateOptions struct {
	Summarize           bool
	CustomInstructions  string
	ReplaceInstructions bool
	Label               string
}

// SummaryEntry describes a branch summary written by a navigation.
type SummaryEntry struct {
	ID            string `json:"id"`
	Summary       string `json:"summary"`
	FromExtension bool   `json:"fromExtension"`
}

// NavigateResult is navigate_tree's answer.
type NavigateResult struct {
	Cancelled    bool          `json:"cancelled"`
	Aborted      bool          `json:"aborted,omitempty"`
	EditorText   *string       `json:"editorText,omitempty"`
	SummaryEntry *SummaryEntry `json:"summaryEntry,omitempty"`
}

// NavigateTree moves the session's leaf to targetID (pi's navigateTree):
// a running turn is aborted first; a user or custom message target puts
// the leaf on its parent and returns its text for the editor; with
// Summarize the abandoned branch is summarised into a branch_summary entry
// that becomes the new leaf.
func (s *Session) NavigateTree(targetID string, o NavigateOptions) (*NavigateResult, error) {
	s.Abort()
	st := s.Store()
	target := st.Entry(targetID)
	if target == nil {
		return nil, fmt.Errorf("Entry %s not found", targetID)
	}
	oldLeaf := st.LeafID()
	if targetID == oldLeaf {
		return &NavigateResult{}, nil
	}
	if !s.sessionBefore("tree", map[string]any{"targetId": targetID, "oldLeafId": oldLeaf,
		"userWantsSummary": o.Summarize, "customInstructions": o.CustomInstructions, "label": o.Label}) {
		return &NavigateResult{Cancelled: true}, nil
	}
	res := &NavigateResult{}
	newLeaf := targetID
	switch {
	case target.Type == session.TypeMessage && target.Role() == ai.RoleUser:
		newLeaf = target.Parent()
		t := target.Message().(*ai.UserMessage).Content.PlainText()
		res.EditorText = &t
	case target.Type == session.TypeCustomMessage:
		newLeaf = target.Parent()
		t := target.Content.PlainText()
		res.EditorText = &t
	}

	var summary string
	var usage *ai.Usage
	var details *compaction.Details
	if o.Summarize && oldLeaf != "" {
		var oldPath, newPath []*session.Entry
		oldPath = st.Branch(oldLeaf)
		if newLeaf != "" {
			newPath = st.Branch(newLeaf)
		}
		window := 128000
		if m := s.Model(); m != nil && m.ContextWindow > 0 {
			window = m.ContextWindow
		}
		prep := compaction.PrepareBranch(oldPath, newPath, window-s.opts.Settings.BranchSummaryReserveTokens())
		if len(prep.Messages) > 0 {
			text, u, err := s.summarizeBranch(prep, o)
			if errors.Is(err, context.Canceled) {
				return &NavigateResult{Cancelled: true, Aborted: true}, nil
			}
			if err != nil {
				return nil, err
			}
			summary, usage = text, u
			details = &compaction.Details{ReadFiles: prep.ReadFiles, ModifiedFiles: prep.ModifiedFiles}
		}
	}

	if newLeaf == "" {
		st.ResetLeaf()
	} else if err := st.SetLeaf(newLeaf); err != nil {
		return nil, err
	}
	label := strings.TrimSpace(o.Label)
	if summary != "" {
		from := oldLeaf
		e, err := st.AppendBranchSummaryUsage(from, summary, json.RawMessage(jsonx.MustMarshal(details)), usage, false)
		if err != nil {
			return nil, err
		}
		res.SummaryEntry = &SummaryEntry{ID: e.ID, Summary: summary}
		if label != "" {
			if _, err := st.AppendLabel(e.ID, label); err != nil {
				return nil, err
			}
		}
	} else if label != "" {
		if _, err := st.AppendLabel(targetID, label); err != nil {
			return nil, err
		}
	}
	s.emitSessionChanged(ChangeTree)
	return res, nil
}

// summarizeBranch runs a branch summary that abort_branch_summary (and
// abort) can cancel; get_state reports isCompacting meanwhile.
func (s *Session) summarizeBranch(prep *compaction.BranchPreparation, o NavigateOptions) (string, *ai.Usage, error) {
	m, err := s.summaryModel(rpc.SummarySourceBranchSummary, "")
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.beginCompacting(cancel)
	defer s.endCompacting()
	return compaction.SummarizeBranch(ctx, m, prep, o.CustomInstructions, o.ReplaceInstructions)
}

// AbortBranchSummary cancels a branch summary in progress.
func (s *Session) AbortBranchSummary() { s.cancelCompaction() }

// SetLabel labels an entry (a blank label clears it).
func (s *Session) SetLabel(entryID, label string) error {
	st := s.Store()
	if st.Entry(entryID) == nil {
		return fmt.Errorf("Entry %s not found", entryID)
	}
	_, err := st.AppendLabel(entryID, strings.TrimSpace(label))
	return err
}
