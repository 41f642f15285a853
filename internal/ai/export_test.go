package ai

import "math/rand"

// SetReflectOnly switches the MarshalJSON methods to the reflective
// encoders (for tests of wrappers in other packages).
func SetReflectOnly(b bool) { reflectOnly.Store(b) }

// RandomUpdate returns random values for a message_update event.
func RandomUpdate(r *rand.Rand, bad bool) (AssistantEvent, *Usage, *AssistantMessage) {
	g := randGen{r}
	var partial *AssistantMessage
	if r.Intn(2) == 0 {
		partial = g.assistant(bad)
	}
	u := g.usage(bad)
	if r.Intn(8) == 0 {
		return g.event(bad), nil, partial // written as zero usage
	}
	return g.event(bad), &u, partial
}

// RandomMessage returns a random message for the events that carry whole
// messages: mostly assistant messages (the fast encoder), sometimes nil, a
// nil *AssistantMessage, a user message or a tool result.
func RandomMessage(r *rand.Rand, bad bool) Message {
	g := randGen{r}
	switch r.Intn(10) {
	case 0:
		return nil
	case 1:
		return (*AssistantMessage)(nil)
	case 2:
		return &UserMessage{Role: RoleUser, Content: StringContent(g.str()), Timestamp: r.Int63(), Extra: g.extra(bad)}
	case 3:
		return RandomToolResult(r, bad)
	default:
		return g.assistant(bad)
	}
}

// RandomToolResult returns a random tool result (nil now and then).
func RandomToolResult(r *rand.Rand, bad bool) *ToolResultMessage {
	g := randGen{r}
	if r.Intn(8) == 0 {
		return nil
	}
	m := &ToolResultMessage{Role: g.optStr(), ToolCallID: g.str(), ToolName: g.str(), IsError: r.Intn(2) == 0,
		Timestamp: r.Int63(), Extra: g.extra(bad)}
	for n := r.Intn(3); n > 0; n-- {
		m.Content = append(m.Content, g.content(bad))
	}
	if r.Intn(3) == 0 {
		m.Details = g.raw(bad)
	}
	return m
}
