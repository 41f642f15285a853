package ai

// Outlines let an encoder write a message whose texts run to megabytes
// without building its JSON in one buffer: it encodes the outline, in which
// each long text is a short alias, and writes each text itself (escaped a
// piece at a time) where its alias appears. Texts are the members written
// with jsonx.AppendString: text, thinking, image data, string content,
// output, summaries. Raw JSON members (arguments, details) stay as they are.

// Outline returns m, or when m holds a text of at least min bytes, a
// shallow copy of m in which every such text is alias(text). m itself is
// not modified; the copy shares everything else with it.
func Outline(m Message, min int, alias func(string) string) Message {
	o := outliner{min: min, alias: alias}
	switch v := m.(type) {
	case *UserMessage:
		if v == nil || !o.userContentLong(v.Content) {
			return m
		}
		c := *v
		c.Content = o.userContent(v.Content)
		return &c
	case *AssistantMessage:
		if v == nil {
			return m
		}
		if out, ok := o.assistant(v); ok {
			return out
		}
		return m
	case *ToolResultMessage:
		if v == nil {
			return m
		}
		if out, ok := o.toolResult(v); ok {
			return out
		}
		return m
	case *SystemMessage:
		if v == nil || !o.userContentLong(v.Content) {
			return m
		}
		c := *v
		c.Content = o.userContent(v.Content)
		return &c
	case *CustomMessage:
		if v == nil || !o.userContentLong(v.Content) {
			return m
		}
		c := *v
		c.Content = o.userContent(v.Content)
		return &c
	case *BashExecutionMessage:
		if v == nil || len(v.Output) < min && len(v.Command) < min {
			return m
		}
		c := *v
		c.Output, c.Command = o.str(v.Output), o.str(v.Command)
		return &c
	case *BranchSummaryMessage:
		if v == nil || len(v.Summary) < min {
			return m
		}
		c := *v
		c.Summary = alias(v.Summary)
		return &c
	case *CompactionSummaryMessage:
		if v == nil || len(v.Summary) < min {
			return m
		}
		c := *v
		c.Summary = alias(v.Summary)
		return &c
	}
	return m
}

// OutlineAssistant is Outline for an assistant message (nil stays nil).
func OutlineAssistant(m *AssistantMessage, min int, alias func(string) string) *AssistantMessage {
	if m == nil {
		return nil
	}
	o := outliner{min: min, alias: alias}
	if out, ok := o.assistant(m); ok {
		return out
	}
	return m
}

// OutlineToolResult is Outline for a tool result (nil stays nil).
func OutlineToolResult(m *ToolResultMessage, min int, alias func(string) string) *ToolResultMessage {
	if m == nil {
		return nil
	}
	o := outliner{min: min, alias: alias}
	if out, ok := o.toolResult(m); ok {
		return out
	}
	return m
}

// OutlineContent returns bs, or a copy in which every long text is
// alias(text).
func OutlineContent(bs []Content, min int, alias func(string) string) []Content {
	o := outliner{min: min, alias: alias}
	if !o.blocksLong(bs) {
		return bs
	}
	return o.blocks(bs)
}

type outliner struct {
	min   int
	alias func(string) string
}

func (o outliner) str(s string) string {
	if len(s) < o.min {
		return s
	}
	return o.alias(s)
}

func (o outliner) blockLong(c *Content) bool {
	return len(c.Text) >= o.min || len(c.Thinking) >= o.min || len(c.Data) >= o.min
}

func (o outliner) blocksLong(bs []Content) bool {
	for i := range bs {
		if o.blockLong(&bs[i]) {
			return true
		}
	}
	return false
}

func (o outliner) blocks(bs []Content) []Content {
	out := make([]Content, len(bs))
	copy(out, bs)
	for i := range out {
		c := &out[i]
		c.Text, c.Thinking, c.Data = o.str(c.Text), o.str(c.Thinking), o.str(c.Data)
	}
	return out
}

func (o outliner) userContentLong(u UserContent) bool {
	if u.IsString {
		return len(u.Str) >= o.min
	}
	return o.blocksLong(u.Blocks)
}

func (o outliner) userContent(u UserContent) UserContent {
	if u.IsString {
		u.Str = o.str(u.Str)
		return u
	}
	u.Blocks = o.blocks(u.Blocks)
	return u
}

func (o outliner) assistant(m *AssistantMessage) (*AssistantMessage, bool) {
	if !o.blocksLong(m.Content) && len(m.ErrorMessage) < o.min {
		return nil, false
	}
	c := *m
	if o.blocksLong(m.Content) {
		c.Content = o.blocks(m.Content)
	}
	c.ErrorMessage = o.str(m.ErrorMessage)
	return &c, true
}

func (o outliner) toolResult(m *ToolResultMessage) (*ToolResultMessage, bool) {
	if !o.blocksLong(m.Content) {
		return nil, false
	}
	c := *m
	c.Content = o.blocks(m.Content)
	return &c, true
}
