package ai

import "github.com/pisces-agent/pisces/internal/jsonx"

// SizeHint is about the length of m's JSON, exactly so for its long texts
// (whose escaped length is measured: a pass over them): a buffer of this
// size holds the encoding without growing, so a message of megabytes is not
// copied as its buffer grows.
func SizeHint(m Message) int { return sizeOf(m, true) }

// ApproxSize is about the length of m's JSON from the lengths of its texts
// alone (never fewer bytes than it has text); it walks content blocks, not
// text, so it costs little whatever their size (output queues count
// messages by it).
func ApproxSize(m Message) int { return sizeOf(m, false) }

// ContentSizeHint is ApproxSize for content blocks.
func ContentSizeHint(bs []Content) int { return sizer{}.blocks(bs) }

// exactFrom is the length from which SizeHint measures a text's JSON
// length rather than guessing it.
const exactFrom = 64 << 10

type sizer struct{ exact bool }

// str is about the JSON length of s.
func (z sizer) str(s string) int {
	if z.exact && len(s) >= exactFrom {
		return jsonx.StringLen(s)
	}
	return 2 + len(s) + len(s)/16
}

func (z sizer) userContent(u UserContent) int {
	if u.IsString {
		return z.str(u.Str)
	}
	return z.blocks(u.Blocks)
}

func (z sizer) blocks(bs []Content) int {
	n := 2
	for i := range bs {
		c := &bs[i]
		n += 64 + z.str(c.Text) + z.str(c.Thinking) + z.str(c.Data) + len(c.Arguments) +
			len(c.TextSignature) + len(c.ThinkingSignature) + len(c.ID) + len(c.Name) +
			len(c.ArgumentsError) + len(c.MimeType) + len(c.URL) + len(c.ThoughtSignature) + len(c.Namespace)
	}
	return n
}

func sizeOf(m Message, exact bool) int {
	z := sizer{exact: exact}
	switch m := m.(type) {
	case nil:
		return 4
	case *AssistantMessage:
		if m == nil {
			return 4
		}
		return 256 + z.blocks(m.Content) + z.str(m.ErrorMessage)
	case *UserMessage:
		if m == nil {
			return 4
		}
		return 64 + z.userContent(m.Content)
	case *SystemMessage:
		if m == nil {
			return 4
		}
		n := 64 + z.userContent(m.Content) + len(m.Sections)
		for _, t := range m.ToolsAdded {
			n += 64 + len(t.Name) + z.str(t.Description) + len(t.Parameters)
		}
		return n
	case *ToolResultMessage:
		if m == nil {
			return 4
		}
		return 256 + z.blocks(m.Content) + len(m.Details) + len(m.NestedCalls)
	case *BashExecutionMessage:
		if m == nil {
			return 4
		}
		return 192 + z.str(m.Command) + z.str(m.Output)
	case *CustomMessage:
		if m == nil {
			return 4
		}
		return 128 + z.userContent(m.Content) + len(m.Details)
	case *BranchSummaryMessage:
		if m == nil {
			return 4
		}
		return 128 + z.str(m.Summary)
	case *CompactionSummaryMessage:
		if m == nil {
			return 4
		}
		return 128 + z.str(m.Summary)
	case *UnknownMessage:
		if m == nil {
			return 4
		}
		return len(m.Raw)
	}
	return 256
}
