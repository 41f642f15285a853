package rpcmode

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/rpc"
)

// A frame of megabytes (the message_start, message_end and agent_end of a
// huge prompt, a long merged delta) is not encoded into one buffer: the
// writer encodes its outline, in which each long text is a short alias
// (ai.Outline), and writes each text from its own memory, escaped a piece
// at a time, where its alias appears. The bytes are those of the whole
// frame encoded at once.

// spliceMin is the size (as counted for the queue) from which a frame is
// written in pieces.
const spliceMin = 1 << 20

// longText is the length from which a text is written from its own memory.
const longText = 64 << 10

// splicer collects the long texts of one frame.
type splicer struct {
	prefix string // "pisces-text-<random>-": no alias collides with text
	texts  [][]string
}

func newSplicer() *splicer {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &splicer{prefix: "pisces-text-" + hex.EncodeToString(b[:]) + "-"}
}

func (sp *splicer) alias(s string) string { return sp.aliasParts([]string{s}) }

// aliasParts stands for the concatenation of parts (each part after the
// first must start at a character boundary: see jsonx.StringReader).
func (sp *splicer) aliasParts(parts []string) string {
	sp.texts = append(sp.texts, parts)
	return sp.prefix + strconv.Itoa(len(sp.texts)-1) + "."
}

// joinable reports whether escaping parts one after another is escaping
// their concatenation: no part after the first starts inside a character.
func joinable(parts []string) bool {
	for i, p := range parts {
		if i > 0 && p != "" && !utf8.RuneStart(p[0]) {
			return false
		}
	}
	return true
}

// outlineEvent returns ev, or a shallow copy of it whose long texts are
// aliases.
func outlineEvent(ev rpc.Event, alias func(string) string) rpc.Event {
	switch e := ev.(type) {
	case *rpc.MessageStartEvent:
		c := *e
		c.Message = ai.Outline(e.Message, longText, alias)
		return &c
	case *rpc.MessageEndEvent:
		c := *e
		c.Message = ai.Outline(e.Message, longText, alias)
		return &c
	case *rpc.TurnEndEvent:
		c := *e
		c.Message = ai.Outline(e.Message, longText, alias)
		if e.ToolResults != nil {
			c.ToolResults = make([]*ai.ToolResultMessage, len(e.ToolResults))
			for i, r := range e.ToolResults {
				c.ToolResults[i] = ai.OutlineToolResult(r, longText, alias)
			}
		}
		return &c
	case *rpc.AgentEndEvent:
		c := *e
		if e.Messages != nil {
			c.Messages = make(ai.Messages, len(e.Messages))
			for i, m := range e.Messages {
				c.Messages[i] = ai.Outline(m, longText, alias)
			}
		}
		return &c
	case *rpc.ToolExecutionUpdateEvent:
		c := *e
		c.PartialResult.Content = ai.OutlineContent(e.PartialResult.Content, longText, alias)
		return &c
	case *rpc.ToolExecutionEndEvent:
		c := *e
		c.Result.Content = ai.OutlineContent(e.Result.Content, longText, alias)
		return &c
	case *rpc.MessageUpdateEvent:
		c := *e
		a := &c.AssistantMessageEvent
		if len(a.Delta) >= longText {
			a.Delta = alias(a.Delta)
		}
		if len(a.Content) >= longText {
			a.Content = alias(a.Content)
		}
		c.Partial = ai.OutlineAssistant(e.Partial, longText, alias)
		return &c
	}
	return ev
}

// writeSpliced writes a large event in pieces; deltas, when not nil, are
// the merged deltas of a message_update, its text. It returns false,
// having written nothing, when the event holds no long text.
func (w *writer) writeSpliced(ev rpc.Event, deltas []string) (bool, error) {
	if w.sp == nil {
		w.sp = newSplicer()
	}
	sp := w.sp
	sp.texts = sp.texts[:0]
	defer func() { clear(sp.texts) }()
	if deltas != nil {
		e := *ev.(*rpc.MessageUpdateEvent)
		if joinable(deltas) {
			e.AssistantMessageEvent.Delta = sp.aliasParts(deltas)
		} else {
			e.AssistantMessageEvent.Delta = strings.Join(deltas, "")
		}
		ev = &e
	}
	out := outlineEvent(ev, sp.alias)
	if len(sp.texts) == 0 {
		return false, nil
	}
	b, err := rpc.AppendEvent(w.buf[:0], out)
	if cap(b) <= maxReusedBuf {
		w.buf = b
	}
	if err != nil {
		return true, err
	}
	if w.err != nil {
		return true, nil
	}
	quoted := []byte(`"` + sp.prefix)
	rest := b
	for {
		i := bytes.Index(rest, quoted)
		if i < 0 {
			break
		}
		j := i + len(quoted)
		end := bytes.IndexByte(rest[j:], '.')
		if end < 0 || j+end+1 >= len(rest) || rest[j+end+1] != '"' {
			break
		}
		k, err := strconv.Atoi(string(rest[j : j+end]))
		if err != nil || k < 0 || k >= len(sp.texts) {
			break
		}
		w.out.Write(rest[:i])
		if _, err := io.Copy(w.out, jsonx.NewStringReader(sp.texts[k]...)); err != nil {
			w.err = err
			return true, nil
		}
		rest = rest[j+end+2:]
	}
	w.out.Write(rest)
	if err := w.out.WriteByte('\n'); err != nil {
		w.err = err
	}
	return true, nil
}
