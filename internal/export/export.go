// Package export writes a session's current branch as one self-contained
// HTML page (export_html and `pisces --export`): inline CSS and JavaScript
// only, nothing fetched when the page is opened. Message text is written
// into the page as escaped text and rendered as Markdown by the page's own
// script (markdown.js), which builds elements without ever parsing session
// text as HTML; a Content-Security-Policy lets no other script run and
// nothing load. Thinking, tool calls with their results, bash executions
// and summaries are collapsible.
package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/browse"
	"github.com/pisces-agent/pisces/internal/lazy"
	"github.com/pisces-agent/pisces/internal/session"
)

// Options adjust the page.
type Options struct {
	Title string // page title; "" = the session name, else "Session <id>"
	Home  string // directory shortened to ~ in tool call summaries; "" = browse.DefaultHome()
}

// HTML writes the current branch of s (root to leaf) to w as one HTML page.
func HTML(s *session.Session, w io.Writer, opts Options) error {
	home := opts.Home
	if home == "" {
		home = browse.DefaultHome()
	}
	var branch []*session.Entry
	if leaf := s.LeafID(); leaf != "" {
		branch = s.Branch(leaf)
		session.DecodeMessages(branch)
	}
	p := &page{home: home, labels: s.Labels(), results: map[string]*ai.ToolResultMessage{}, shown: map[*ai.ToolResultMessage]bool{}}
	for _, e := range branch {
		if m, ok := e.Message().(*ai.ToolResultMessage); ok && e.Type == session.TypeMessage && m.ToolCallID != "" {
			if _, dup := p.results[m.ToolCallID]; !dup {
				p.results[m.ToolCallID] = m
			}
		}
	}

	bw := bufio.NewWriterSize(w, 64<<10)
	h := s.Header()
	title := opts.Title
	if title == "" {
		title = s.Name()
	}
	if title == "" {
		title = "Session " + h.ID
	}
	pg := pageAssets.Get()
	bw.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	bw.WriteString(`<meta http-equiv="Content-Security-Policy" content="` + pg.csp + `">` + "\n")
	bw.WriteString(`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n")
	bw.WriteString("<title>" + esc(title) + "</title>\n<style>" + css + "</style>\n</head>\n<body>\n")

	// Header.
	bw.WriteString(`<header class="page"><h1>` + esc(title) + "</h1>\n<dl>")
	meta := func(k, v string) {
		if v != "" {
			bw.WriteString("<dt>" + esc(k) + "</dt><dd>" + esc(v) + "</dd>")
		}
	}
	if name := s.Name(); name != "" && name != title {
		meta("Name", name)
	}
	meta("Session", h.ID)
	meta("Started", displayTime(h.Timestamp))
	meta("Directory", h.Cwd)
	meta("File", s.File())
	meta("Entries on this branch", fmt.Sprint(len(branch)))
	bw.WriteString("</dl>\n")
	bw.WriteString(`<div class="controls"><button type="button" data-toggle="open">Expand all</button> <button type="button" data-toggle="close">Collapse all</button></div>`)
	bw.WriteString("</header>\n<main>\n")

	for _, e := range branch {
		bw.WriteString(p.entry(e))
	}
	if len(branch) == 0 {
		bw.WriteString(`<p class="empty">This session has no entries.</p>`)
	}
	bw.WriteString("</main>\n<footer>Exported by Pisces</footer>\n<script>" + pg.script + "</script>\n</body>\n</html>\n")
	return bw.Flush()
}

type page struct {
	home    string
	labels  map[string]string
	results map[string]*ai.ToolResultMessage // by tool call id, on the branch
	shown   map[*ai.ToolResultMessage]bool   // results already shown under their call
}

// esc escapes text for HTML, replacing invalid UTF-8.
func esc(s string) string { return html.EscapeString(strings.ToValidUTF8(s, "\uFFFD")) }

// md is Markdown text for the page's renderer: escaped text in an element
// marked data-md, shown as it is (white space kept) until the script has
// rendered it.
func md(s string) string { return `<div data-md="">` + esc(s) + "</div>" }

func displayTime(iso string) string {
	t, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		return iso
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// head opens an entry's section with its role line.
func (p *page) head(e *session.Entry, class, role, extra string) string {
	var b strings.Builder
	b.WriteString(`<section class="entry ` + class + `" id="entry-` + esc(e.ID) + `">`)
	b.WriteString(`<div class="role"><span class="who">` + esc(role) + `</span>`)
	if extra != "" {
		b.WriteString(` <span class="extra">` + esc(extra) + `</span>`)
	}
	if l := p.labels[e.ID]; l != "" {
		b.WriteString(` <span class="label">` + esc(l) + `</span>`)
	}
	b.WriteString(`<time datetime="` + esc(e.Timestamp) + `">` + esc(displayTime(e.Timestamp)) + "</time></div>\n")
	return b.String()
}

func (p *page) entry(e *session.Entry) string {
	switch e.Type {
	case session.TypeMessage:
		return p.message(e)
	case session.TypeCompaction:
		return p.head(e, "summary", "Compaction", fmt.Sprintf("%d tokens before", e.TokensBefore)) +
			`<details class="block"><summary>Summary of the earlier conversation</summary><div class="md">` + md(e.Summary) + "</div></details></section>\n"
	case session.TypeBranchSummary:
		return p.head(e, "summary", "Branch summary", "") +
			`<details class="block" open><summary>Summary of the branch left behind</summary><div class="md">` + md(e.Summary) + "</div></details></section>\n"
	case session.TypeCustomMessage:
		return p.head(e, "custom", "Extension message", e.CustomType) + customBody(e.Content, e.Display) + "</section>\n"
	case session.TypeModelChange:
		return `<div class="meta">Model: ` + esc(e.Provider+"/"+e.ModelID) + "</div>\n"
	case session.TypeThinkingLevelChange:
		return `<div class="meta">Thinking level: ` + esc(e.ThinkingLevel) + "</div>\n"
	}
	return "" // labels, session info, extension state and bookkeeping
}

func (p *page) message(e *session.Entry) string {
	switch m := e.Message().(type) {
	case *ai.UserMessage:
		return p.head(e, "user", "User", "") + `<div class="md">` + userContent(m.Content) + "</div></section>\n"
	case *ai.AssistantMessage:
		return p.assistant(e, m)
	case *ai.ToolResultMessage:
		if p.shown[m] {
			return ""
		}
		return p.head(e, "tool", "Tool result", m.ToolName) + toolResult(m, "["+m.ToolName+"] result", false) + "</section>\n"
	case *ai.BashExecutionMessage:
		return p.head(e, "bash", "Shell", "") + bashExecution(m) + "</section>\n"
	case *ai.CustomMessage:
		return p.head(e, "custom", "Extension message", m.CustomType) + customBody(m.Content, m.Display) + "</section>\n"
	case *ai.BranchSummaryMessage:
		return p.head(e, "summary", "Branch summary", "") + `<div class="md">` + md(m.Summary) + "</div></section>\n"
	case *ai.CompactionSummaryMessage:
		return p.head(e, "summary", "Compaction", "") + `<div class="md">` + md(m.Summary) + "</div></section>\n"
	case *ai.SystemMessage:
		return p.head(e, "system", "System", "") + `<details class="block"><summary>System prompt</summary><pre class="text">` + esc(m.PromptText()) + "</pre></details></section>\n"
	case *ai.UnknownMessage:
		return p.head(e, "system", m.Role, "") + `<details class="block"><summary>Message</summary><pre class="text">` + esc(prettyJSON(m.Raw)) + "</pre></details></section>\n"
	}
	return ""
}

func (p *page) assistant(e *session.Entry, m *ai.AssistantMessage) string {
	var b strings.Builder
	model := m.Model
	if m.Provider != "" && model != "" {
		model = m.Provider + "/" + model
	}
	b.WriteString(p.head(e, "assistant", "Assistant", model))
	for i := range m.Content {
		c := &m.Content[i]
		switch c.Type {
		case ai.ContentText:
			if strings.TrimSpace(c.Text) != "" {
				b.WriteString(`<div class="md">` + md(c.Text) + "</div>\n")
			}
		case ai.ContentThinking:
			if c.Redacted {
				b.WriteString(`<details class="block thinking"><summary>Thinking (redacted)</summary></details>` + "\n")
				continue
			}
			if strings.TrimSpace(c.Thinking) == "" {
				continue
			}
			b.WriteString(`<details class="block thinking"><summary>Thinking</summary><div class="md">` + md(c.Thinking) + "</div></details>\n")
		case ai.ContentToolCall:
			b.WriteString(p.toolCall(c))
		case ai.ContentImage:
			b.WriteString(image(c))
		}
	}
	switch {
	case m.StopReason == ai.StopError:
		msg := m.ErrorMessage
		if msg == "" {
			msg = "The request failed."
		}
		b.WriteString(`<div class="error">` + esc(msg) + "</div>\n")
	case m.StopReason == ai.StopAborted:
		msg := "Aborted"
		if m.ErrorMessage != "" {
			msg += ": " + m.ErrorMessage
		}
		b.WriteString(`<div class="error">` + esc(msg) + "</div>\n")
	case m.StopReason == ai.StopLength:
		b.WriteString(`<div class="error">The response hit the output length limit.</div>` + "\n")
	}
	b.WriteString("</section>\n")
	return b.String()
}

func (p *page) toolCall(c *ai.Content) string {
	var b strings.Builder
	summary := browse.FormatToolCall(c.Name, c.Arguments, p.home)
	res := p.results[c.ID]
	status := `<span class="status pending">no result</span>`
	if res != nil {
		if res.IsError {
			status = `<span class="status fail">error</span>`
		} else {
			status = `<span class="status ok">done</span>`
		}
	}
	b.WriteString(`<details class="block tool"><summary><code>` + esc(summary) + `</code> ` + status + "</summary>\n")
	b.WriteString(`<div class="sub">Arguments</div><pre class="text">` + esc(prettyJSON(c.Arguments)) + "</pre>\n")
	if res != nil {
		p.shown[res] = true
		b.WriteString(`<div class="sub">Result</div>` + toolResultBody(res))
	}
	b.WriteString("</details>\n")
	return b.String()
}

func toolResult(m *ai.ToolResultMessage, summary string, open bool) string {
	o := ""
	if open {
		o = " open"
	}
	class := "block tool"
	if m.IsError {
		class += " failed"
	}
	return `<details class="` + class + `"` + o + `><summary>` + esc(summary) + "</summary>\n" + toolResultBody(m) + "</details>\n"
}

func toolResultBody(m *ai.ToolResultMessage) string {
	var b strings.Builder
	cls := "text"
	if m.IsError {
		cls += " err"
	}
	for i := range m.Content {
		c := &m.Content[i]
		switch c.Type {
		case ai.ContentText:
			b.WriteString(`<pre class="` + cls + `">` + esc(c.Text) + "</pre>\n")
		case ai.ContentImage:
			b.WriteString(image(c))
		}
	}
	if b.Len() == 0 {
		b.WriteString(`<pre class="text">(no output)</pre>` + "\n")
	}
	return b.String()
}

func bashExecution(m *ai.BashExecutionMessage) string {
	var b strings.Builder
	status := ""
	switch {
	case m.Cancelled:
		status = `<span class="status fail">cancelled</span>`
	case m.ExitCode != nil && *m.ExitCode != 0:
		status = fmt.Sprintf(`<span class="status fail">exit %d</span>`, *m.ExitCode)
	case m.ExitCode != nil:
		status = `<span class="status ok">exit 0</span>`
	}
	b.WriteString(`<details class="block bash" open><summary><code>$ ` + esc(m.Command) + `</code> ` + status + "</summary>\n")
	out := m.Output
	if out == "" {
		out = "(no output)"
	}
	b.WriteString(`<pre class="text">` + esc(out) + "</pre>\n")
	if m.Truncated {
		note := "Output truncated."
		if m.FullOutputPath != "" {
			note += " Full output: " + m.FullOutputPath
		}
		b.WriteString(`<div class="sub">` + esc(note) + "</div>\n")
	}
	if m.ExcludeFromContext {
		b.WriteString(`<div class="sub">Not sent to the model.</div>` + "\n")
	}
	b.WriteString("</details>\n")
	return b.String()
}

// customBody shows an extension's message; one not meant for display
// starts collapsed.
func customBody(u ai.UserContent, display bool) string {
	if display {
		return `<div class="md">` + userContent(u) + "</div>"
	}
	return `<details class="block"><summary>Hidden from the conversation view</summary><div class="md">` + userContent(u) + "</div></details>"
}

func userContent(u ai.UserContent) string {
	if u.IsString {
		return md(u.Str)
	}
	var b strings.Builder
	for i := range u.Blocks {
		c := &u.Blocks[i]
		switch c.Type {
		case ai.ContentText:
			b.WriteString(md(c.Text))
		case ai.ContentImage:
			b.WriteString(image(c))
		}
	}
	return b.String()
}

// Compiled when first needed (not at start-up of every mode).
var (
	imageMime = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^image/(png|jpeg|jpg|gif|webp)$`) }}
	base64Re  = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9+/=\r\n]*$`) }}
)

// image shows an image block inline as a data: URI (the page stays
// self-contained); other types are named only, and an image given by URL is
// shown as its address (nothing is fetched when the page is opened).
func image(c *ai.Content) string {
	if c.URL != "" {
		return `<div class="sub">[image: ` + esc(c.URL) + "]</div>\n"
	}
	if imageMime.Get().MatchString(c.MimeType) && base64Re.Get().MatchString(c.Data) {
		return `<div class="image"><img alt="image" src="data:` + c.MimeType + `;base64,` + c.Data + `"></div>` + "\n"
	}
	return `<div class="sub">[image: ` + esc(c.MimeType) + "]</div>\n"
}

// prettyJSON indents JSON for display (raw text when it is not JSON).
func prettyJSON(raw []byte) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return string(raw)
	}
	return out.String()
}
