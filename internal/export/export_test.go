package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/session"
)

const fixture = `{"type":"session","version":3,"id":"sess-x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/proj"}
{"type":"model_change","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","provider":"anthropic","modelId":"claude-x"}
{"type":"message","id":"u1","parentId":"m1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"Please check <script>alert(1)</script> and see https://example.com/x.png and ![pic](https://evil.example/p.png) plus [docs](http://docs.example/a) and <img src=\"http://evil.example/i.png\"> & <b>bold</b>","timestamp":1}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Secret **plan**"},{"type":"text","text":"Here is code:\n\n` + "```go" + `\nfunc main() { fmt.Println(\"hi <there>\") } // note\n` + "```" + `\n\n<div onclick=\"x()\">raw block</div>\n"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"/home/u/proj/main.go","offset":1,"limit":10}}],"api":"x","provider":"anthropic","model":"claude-x","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1}}
{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"package main </pre><script>bad()</script>"},{"type":"image","url":"https://evil.example/shot.png?a=1&b=\"x\""}],"isError":false,"timestamp":1}}
{"type":"message","id":"b1","parentId":"r1","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"bashExecution","command":"ls -la","output":"total 0","exitCode":1,"cancelled":false,"truncated":false,"timestamp":1}}
{"type":"compaction","id":"c0","parentId":"b1","timestamp":"2026-01-01T00:00:06.000Z","summary":"Earlier we **did** things.","firstKeptEntryId":"u1","tokensBefore":5000}
{"type":"label","id":"l1","parentId":"c0","timestamp":"2026-01-01T00:00:07.000Z","targetId":"u1","label":"start here"}
{"type":"session_info","id":"s1","parentId":"l1","timestamp":"2026-01-01T00:00:08.000Z","name":"Export test"}
{"type":"message","id":"u9","parentId":"m1","timestamp":"2026-01-01T00:00:09.000Z","message":{"role":"user","content":"OTHER BRANCH","timestamp":1}}
{"type":"message","id":"a2","parentId":"s1","timestamp":"2026-01-01T00:00:10.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Final answer with a [link](https://x.example) and ` + "`code`" + `."}],"api":"x","provider":"anthropic","model":"claude-x","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}}
`

func exportFixture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(fixture), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := HTML(s, &buf, Options{Home: "/home/u"}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestHTMLExport(t *testing.T) {
	out := exportFixture(t)
	if os.Getenv("EXPORT_DUMP") != "" {
		_ = os.WriteFile(os.Getenv("EXPORT_DUMP"), []byte(out), 0o644)
	}
	for _, want := range []string{
		"<!DOCTYPE html>", "<title>Export test</title>", "sess-x", "2026-01-01 00:00:00 UTC", "/home/u/proj",
		// Message text is escaped text, rendered by the page's script.
		`<div data-md="">Please check &lt;script&gt;alert(1)&lt;/script&gt;`,
		"&lt;img src=&#34;http://evil.example/i.png&#34;&gt; &amp; &lt;b&gt;bold&lt;/b&gt;</div>",
		`<details class="block thinking"><summary>Thinking</summary><div class="md"><div data-md="">Secret **plan**</div>`,
		"func main() { fmt.Println(&#34;hi &lt;there&gt;&#34;) } // note",
		`&lt;div onclick=&#34;x()&#34;&gt;raw block&lt;/div&gt;`,
		`<div class="sub">[image: https://evil.example/shot.png?a=1&amp;b=&#34;x&#34;]</div>`, // image by URL named, not loaded
		`<code>[read: ~/proj/main.go:1-10]</code> <span class="status ok">done</span>`,        // tool call with its result
		"package main &lt;/pre&gt;&lt;script&gt;bad()&lt;/script&gt;",                         // result escaped
		"<code>$ ls -la</code>", `<span class="status fail">exit 1</span>`, "total 0", // bash
		"Compaction", "5000 tokens before", "Earlier we **did** things.",
		`<span class="label">start here</span>`,
		"Final answer with a [link](https://x.example) and `code`.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	// Only the current branch.
	if strings.Contains(out, "OTHER BRANCH") {
		t.Error("the other branch is shown")
	}
	// The tool result is shown once, under its call.
	if n := strings.Count(out, "package main &lt;/pre&gt;"); n != 1 {
		t.Errorf("tool result shown %d times", n)
	}
	checkPage(t, out)
}

// checkPage checks what every exported page must hold to: one complete
// document whose only script is its own, allowed to run by the page's
// Content-Security-Policy (which also forbids loading anything), with no
// reference to anything outside it.
func checkPage(t *testing.T, out string) {
	t.Helper()
	// Exactly one script element: the page's own.
	if n := strings.Count(strings.ToLower(out), "<script"); n != 1 {
		t.Errorf("%d <script elements", n)
	}
	// Nothing fetched from elsewhere: no src/href with a scheme or a
	// protocol-relative address, no @import, no url(...) in the CSS.
	if m := regexp.MustCompile(`(?i)(src|href|action|srcset|poster)\s*=\s*["']?\s*(https?:|//|javascript:)`).FindString(out); m != "" {
		t.Errorf("external reference: %s", m)
	}
	if m := regexp.MustCompile(`(?i)@import|url\(`).FindString(out); m != "" {
		t.Errorf("external style reference: %s", m)
	}
	if !strings.Contains(out, "</html>") || !strings.HasPrefix(out, "<!DOCTYPE html>") {
		t.Error("not a complete document")
	}
	// Tags are balanced for the structural elements.
	for _, tag := range []string{"section", "details", "pre", "div", "main"} {
		if o, c := strings.Count(out, "<"+tag), strings.Count(out, "</"+tag+">"); o != c {
			t.Errorf("<%s>: %d opened, %d closed", tag, o, c)
		}
	}
	// The policy allows exactly the page's style sheet and script.
	m := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(out)
	if m == nil {
		t.Fatal("no Content-Security-Policy")
	}
	style := between(t, out, "<style>", "</style>")
	script := between(t, out, "<script>", "</script>")
	want := "default-src 'none'; img-src data:; style-src " + sha(style) + "; script-src " + sha(script)
	if m[1] != want {
		t.Errorf("policy %q\nwant   %q", m[1], want)
	}
}

func between(t *testing.T, s, open, end string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, open)
	body, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("no %s...%s", open, end)
	}
	return body
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// The page's script builds the rendered Markdown with createElement,
// createTextNode and setAttribute only; nothing in it parses text as HTML
// or runs text as code, and it holds nothing that would end or escape the
// script element early.
func TestPageScriptIsSafe(t *testing.T) {
	script := pageAssets.Get().script
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(",
		"setTimeout(", "setInterval(", `"href"`, ".href", "DOMParser", "createRange", "srcdoc", "<!--", "<script", "</script", "]]>"} {
		if strings.Contains(strings.ToLower(script), strings.ToLower(bad)) {
			t.Errorf("the page script contains %q", bad)
		}
	}
	for _, m := range regexp.MustCompile(`setAttribute\("([^"]*)"`).FindAllStringSubmatch(script, -1) {
		switch m[1] {
		case "class", "start", "checked", "disabled", "type", "src", "alt":
		default:
			t.Errorf("setAttribute(%q)", m[1])
		}
	}
	if !strings.Contains(script, "mdReDataImage.test(n.dest)") {
		t.Error("img src is no longer checked against the data: image pattern")
	}
}

func TestHTMLEmptySession(t *testing.T) {
	s, err := session.New(session.Options{InMemory: true, Cwd: "/x"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := HTML(s, &buf, Options{Title: "T <x>"}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "<title>T &lt;x&gt;</title>") || !strings.Contains(out, "no entries") {
		t.Errorf("unexpected: %s", out)
	}
	checkPage(t, out)
}

func TestHTMLCustomAndOrphanResult(t *testing.T) {
	lines := `{"type":"session","version":3,"id":"s2","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"custom_message","customType":"note","content":"visible *note*","display":true,"id":"c1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z"}
{"type":"custom_message","customType":"state","content":"hidden note","display":false,"id":"c2","parentId":"c1","timestamp":"2026-01-01T00:00:02.000Z"}
{"type":"message","id":"r1","parentId":"c2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"gone","toolName":"grep","content":[{"type":"text","text":"match"}],"isError":true,"timestamp":1}}
{"type":"branch_summary","id":"b1","parentId":"r1","timestamp":"2026-01-01T00:00:04.000Z","fromId":"root","summary":"Went *elsewhere*"}
`
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := HTML(s, &buf, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		`<div class="md"><div data-md="">visible *note*</div>`,
		`<details class="block"><summary>Hidden from the conversation view</summary><div class="md"><div data-md="">hidden note</div>`,
		`<details class="block tool failed"><summary>[grep] result</summary>`,
		`<pre class="text err">match</pre>`,
		"Branch summary", "Went *elsewhere*",
		"<title>Session s2</title>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
}

// A system message as pi writes it (empty content, the prompt in sections)
// shows its prompt.
func TestHTMLSystemPromptFromSections(t *testing.T) {
	lines := `{"type":"session","version":3,"id":"s3","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"y1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"system","content":"","sections":{"preamble":"You are <careful>.","cwd":"<cwd>/p</cwd>"},"timestamp":1}}
`
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := HTML(s, &buf, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := `<summary>System prompt</summary><pre class="text">You are &lt;careful&gt;.` + "\n\n" + `&lt;cwd&gt;/p&lt;/cwd&gt;</pre>`; !strings.Contains(buf.String(), want) {
		t.Errorf("missing %q in:\n%s", want, buf.String())
	}
}
