package session

import (
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
)

// The line scanner finds keys by their usual order (knownKey); what it
// reads must be what reading every key with key() read (the reference
// below is the scanner before that change).
func TestScanListLineKnownKeys(t *testing.T) {
	lines := []string{
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"s"},{"type":"toolCall","id":"c","name":"bash","arguments":{"x":1}},{"type":"text","text":"answer"}],"api":"x","provider":"p","model":"m","usage":{"input":1},"stopReason":"stop","timestamp":2,"responseId":"r"}}`,
		`{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"out"}],"isError":false,"timestamp":3}}`,
		`{"message":{"role":"user","content":"before type"},"type":"message","id":"a"}`,
		`{"t\u0079pe":"message","timestamp":"x","m\u0065ssage":{"r\u006fle":"user","c\u006fntent":[{"t\u0079pe":"text","t\u0065xt":"escaped keys"}]}}`,
		`{ "type" : "message" , "message" : { "role" : "user" , "content" : [ { "text" : "spaced" , "type" : "text" } ] } }`,
		`{"type":"message","message":{"content":[{"type":"text","text":"content first"}],"role":"assistant","timestamp":5}}`,
		`{"type":"message","type":"session_info","name":"dup","message":{"role":"user","content":"x"}}`,
		`{"type":"session_info","id":"i","parentId":null,"timestamp":"2026","name":"  a name  "}`,
		`{"type":"message","message":{"role":"user","content":[{"type":"text","text":1}]}}`,
		`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"x"}]`,
		`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"x"}]}} trailing`,
		`{"type":"x"}`, `{}`, `{"type":"message","message":{"role":"custom","content":"c"}}`,
		`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"d","mimeType":"m"},{"type":"text","text":"b"}]}}`,
		`{"type":"message","id":"0123456789abcdef0123456789","message":{"role":"assistant","usage":{"a":1},"content":[{"type":"text","text":"late content"}]}}`,
	}
	for _, s := range lines {
		got, gok := scanListLine([]byte(s))
		want, wok := refScanListLine([]byte(s))
		if gok != wok || got.typ != want.typ || got.name != want.name || got.role != want.role || got.text != want.text ||
			string(got.ets) != string(want.ets) || string(got.mts) != string(want.mts) || got.hasContent != want.hasContent {
			t.Errorf("%s:\ngot  %+v %v\nwant %+v %v", s, got, gok, want, wok)
		}
	}
}

func refScanListLine(line []byte) (listLine, bool) {
	var l listLine
	c := &cur{b: line}
	if !c.open('{') {
		return l, false
	}
	first := true
	for !c.bad && c.next('}', &first) {
		switch k := c.key(); {
		case c.bad:
		case k == "type":
			l.typ = c.str()
		case k == "name":
			v := c.raw()
			l.name, _ = str(v)
		case k == "timestamp":
			l.ets = c.raw()
		case k == "message" && l.typ == TypeMessage:
			refScanListMessage(c, &l)
		default:
			c.raw()
		}
	}
	if c.bad || skipWS(line, c.i) != len(line) {
		return l, false
	}
	return l, true
}

func refScanListMessage(c *cur, l *listLine) {
	c.ws()
	if c.i >= len(c.b) || c.b[c.i] != '{' {
		c.raw()
		return
	}
	c.i++
	first := true
	for !c.bad && c.next('}', &first) {
		switch k := c.key(); {
		case c.bad:
		case k == "role":
			v := c.raw()
			l.role, _ = str(v)
		case k == "timestamp":
			l.mts = c.raw()
		case k == "content" && (l.role == "" || l.role == ai.RoleUser || l.role == ai.RoleAssistant):
			l.hasContent = true
			l.text = refScanContentText(c)
		default:
			c.raw()
		}
	}
}

// scanContentText is pi's extractTextContent: a string content, or the
// text blocks joined by spaces.
func refScanContentText(c *cur) string {
	c.ws()
	if c.i < len(c.b) && c.b[c.i] == '"' {
		return c.str()
	}
	if c.i >= len(c.b) || c.b[c.i] != '[' {
		c.raw()
		return ""
	}
	c.i++
	var parts []string
	first := true
	for !c.bad && c.next(']', &first) {
		c.ws()
		if c.i >= len(c.b) || c.b[c.i] != '{' {
			c.raw()
			continue
		}
		c.i++
		bfirst := true
		isText := false
		text := ""
		for !c.bad && c.next('}', &bfirst) {
			switch k := c.key(); {
			case c.bad:
			case k == "type":
				v := c.raw()
				isText = string(v) == `"text"`
			case k == "text":
				text = strOrSkip(c)
			default:
				c.raw()
			}
		}
		if isText {
			parts = append(parts, text)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts, " ")
}
