package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/session"
)

// Model is what a summary call needs: the provider, the model, its key and
// the thinking level in force, and what to do when a call fails.
type Model struct {
	Provider      ai.Provider
	Model         *ai.Model
	APIKey        string
	ThinkingLevel string
	// Retry decides whether a failed call is made again; nil: never.
	Retry Retrier
}

// Retrier decides about failed summary calls.
type Retrier interface {
	// Again is asked after the call failed for the attempt-th time
	// (1-based) with the model's error message failed. It waits out any
	// delay and reports whether to make the call again; it returns false
	// for a lasting failure, when no attempts are left, or when ctx ends.
	Again(ctx context.Context, failed *ai.AssistantMessage, attempt int) bool
	// Finished is called once a call about which Again was asked is over,
	// whatever its outcome.
	Finished()
}

const systemPrompt = `You write summaries of coding sessions so that the work can go on from the summary alone.
You are given part of a conversation between a user and a coding assistant. Do not answer or continue it.
Reply with the structured summary only, nothing before or after it.`

const summaryFormat = `Write the summary in exactly these sections:

## Goal
What the user wants to achieve.

## Constraints & Preferences
Requirements, conventions and preferences the user stated.

## Progress
### Done
- [x] finished work
### In Progress
- [ ] work under way
### Blocked
- anything stuck, and why

## Key Decisions
Choices made and the reasons for them.

## Next Steps
1. the next things to do, in order

## Critical Context
Facts the work cannot go on without: data, error messages, names.

Be brief in every section. Keep exact file paths, function names and error messages.`

const updateFormat = `A summary of the earlier conversation is given in <previous-summary>. Produce an updated summary in the same sections: keep everything in it that still holds, add what the new part of the conversation adds, move finished items from In Progress to Done, and rewrite Next Steps for where the work now stands.

` + summaryFormat

const turnPrefixFormat = `The conversation above is the beginning of a turn whose end is kept in full after this summary. Summarise it in these sections:

## Original Request
What the user asked for in this turn.

## Early Progress
What was done so far in the turn.

## Context for Suffix
What is needed to understand the rest of the turn.

Be brief. Keep exact file paths, function names and error messages.`

const branchFormat = `This conversation is a branch the user explored and then left. Summarise it in these sections:

## Goal
## Constraints & Preferences
## Progress
## Key Decisions
## Next Steps

Be brief. Keep exact file paths, function names and error messages.`

// BranchPreamble opens every generated branch summary.
const BranchPreamble = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"

const toolResultLimit = 2000

// Serialize turns messages into the plain text a summary model reads.
func Serialize(msgs []ai.Message) string {
	var parts []string
	for _, m := range session.ConvertToLLM(msgs) {
		switch v := m.(type) {
		case *ai.UserMessage:
			if t := v.Content.PlainText(); t != "" {
				parts = append(parts, "[User]: "+t)
			}
		case *ai.AssistantMessage:
			var thinking, text []string
			var calls []string
			for _, c := range v.Content {
				switch c.Type {
				case ai.ContentThinking:
					if c.Thinking != "" {
						thinking = append(thinking, c.Thinking)
					}
				case ai.ContentText:
					if c.Text != "" {
						text = append(text, c.Text)
					}
				case ai.ContentToolCall:
					calls = append(calls, formatCall(c))
				}
			}
			if len(thinking) > 0 {
				parts = append(parts, "[Assistant thinking]: "+strings.Join(thinking, "\n"))
			}
			if len(text) > 0 {
				parts = append(parts, "[Assistant]: "+strings.Join(text, "\n"))
			}
			if len(calls) > 0 {
				parts = append(parts, "[Assistant tool calls]: "+strings.Join(calls, "; "))
			}
		case *ai.ToolResultMessage:
			t := ai.JoinText(v.Content, "\n")
			if len(t) > toolResultLimit {
				t = t[:toolResultLimit] + fmt.Sprintf("\n\n[... %d more characters truncated]", len(t)-toolResultLimit)
			}
			parts = append(parts, "[Tool result]: "+t)
		}
	}
	return strings.Join(parts, "\n\n")
}

func formatCall(c ai.Content) string {
	args := string(c.Arguments)
	if args == "" {
		args = "{}"
	}
	return c.Name + "(" + args + ")"
}

// call runs one summary request and returns its text. A failed request is
// made again as long as m.Retry says so.
func call(ctx context.Context, m Model, user string, maxTokens int) (string, *ai.Usage, error) {
	req := &ai.Request{
		Model:         m.Model,
		SystemPrompt:  systemPrompt,
		Messages:      []ai.Message{&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text(user)), Timestamp: ai.NowMs()}},
		ThinkingLevel: m.ThinkingLevel,
		APIKey:        m.APIKey,
		MaxTokens:     maxTokens,
	}
	var msg *ai.AssistantMessage
	asked := false
	for failures := 1; ; failures++ {
		msg = m.Provider.Stream(ctx, req, func(ai.AssistantEvent) {})
		if msg == nil || msg.StopReason != ai.StopError || ctx.Err() != nil || m.Retry == nil {
			break
		}
		asked = true
		if !m.Retry.Again(ctx, msg, failures) {
			break
		}
	}
	if asked {
		m.Retry.Finished()
	}
	switch {
	case msg == nil:
		return "", nil, errors.New("Summarization failed: no response")
	case msg.StopReason == ai.StopAborted || ctx.Err() != nil:
		return "", nil, context.Canceled
	case msg.StopReason == ai.StopError:
		return "", nil, fmt.Errorf("Summarization failed: %s", msg.ErrorMessage)
	}
	text := strings.TrimSpace(ai.JoinText(msg.Content, ""))
	if text == "" {
		return "", nil, errors.New("Summarization failed: the model returned no text")
	}
	if msg.Usage.TotalTokens == 0 {
		return text, nil, nil
	}
	u := msg.Usage
	return text, &u, nil
}

func fileTags(read, modified []string) string {
	var b strings.Builder
	if len(read) > 0 {
		b.WriteString("\n\n<read-files>\n" + strings.Join(read, "\n") + "\n</read-files>")
	}
	if len(modified) > 0 {
		b.WriteString("\n\n<modified-files>\n" + strings.Join(modified, "\n") + "\n</modified-files>")
	}
	return b.String()
}

// Summarize writes the compaction summary of a preparation. A split turn
// runs the history and turn-prefix summaries in parallel and joins them.
func Summarize(ctx context.Context, m Model, p *Preparation, customInstructions string, reserveTokens int) (string, *ai.Usage, error) {
	historyPrompt := func() string {
		var b strings.Builder
		b.WriteString("<conversation>\n" + Serialize(p.ToSummarize) + "\n</conversation>\n\n")
		format := summaryFormat
		if p.PreviousSummary != "" {
			b.WriteString("<previous-summary>\n" + p.PreviousSummary + "\n</previous-summary>\n\n")
			format = updateFormat
		}
		b.WriteString(format)
		if customInstructions != "" {
			b.WriteString("\n\nAdditional focus: " + customInstructions)
		}
		return b.String()
	}
	// The history and the turn prefix are summarised one after the other
	// (pi runs them in parallel): the order of model calls stays
	// deterministic, which scripted tests and replayed sessions rely on.
	var (
		history, prefix string
		hUsage, pUsage  *ai.Usage
		err             error
	)
	if len(p.ToSummarize) > 0 || p.PreviousSummary != "" {
		history, hUsage, err = call(ctx, m, historyPrompt(), reserveTokens*8/10)
		if err != nil {
			return "", nil, err
		}
	}
	if p.IsSplitTurn && len(p.TurnPrefix) > 0 {
		prefix, pUsage, err = call(ctx, m, "<conversation>\n"+Serialize(p.TurnPrefix)+"\n</conversation>\n\n"+turnPrefixFormat, reserveTokens/2)
		if err != nil {
			return "", nil, err
		}
	}
	summary := history
	if prefix != "" {
		if summary != "" {
			summary += "\n\n---\n\n**Turn Context (split turn):**\n\n" + prefix
		} else {
			summary = prefix
		}
	}
	var usage *ai.Usage
	for _, u := range []*ai.Usage{hUsage, pUsage} {
		if u != nil {
			if usage == nil {
				usage = &ai.Usage{}
			}
			usage.Add(*u)
		}
	}
	return summary + fileTags(p.ReadFiles, p.ModifiedFiles), usage, nil
}
