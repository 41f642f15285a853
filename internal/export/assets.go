package export

import (
	"crypto/sha256"
	_ "embed" // the Markdown renderer
	"encoding/base64"

	"github.com/pisces-agent/pisces/internal/lazy"
)

// The page's only style sheet and script, inlined.

const css = `:root {
  --bg: #ffffff; --fg: #1f2328; --muted: #656d76; --border: #d0d7de; --panel: #f6f8fa;
  --user: #ddf4ff; --assistant: #ffffff; --accent: #0969da; --ok: #1a7f37; --fail: #cf222e;
  --code-bg: #f6f8fa; --tok-k: #cf222e; --tok-s: #0a3069; --tok-c: #6e7781; --tok-n: #0550ae;
  --add: #e6ffec; --del: #ffebe9;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #8d96a0; --border: #30363d; --panel: #161b22;
    --user: #0c2d48; --assistant: #0d1117; --accent: #4493f8; --ok: #3fb950; --fail: #f85149;
    --code-bg: #161b22; --tok-k: #ff7b72; --tok-s: #a5d6ff; --tok-c: #8b949e; --tok-n: #79c0ff;
    --add: #12261e; --del: #25171c;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.55 -apple-system, BlinkMacSystemFont, "Segoe UI", Helvetica, Arial, sans-serif; }
header.page, main, footer { max-width: 920px; margin: 0 auto; padding: 0 16px; }
header.page { padding-top: 24px; border-bottom: 1px solid var(--border); padding-bottom: 12px; }
header.page h1 { font-size: 1.5em; margin: 0 0 8px; overflow-wrap: anywhere; }
header.page dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; font-size: 0.9em; }
header.page dt { color: var(--muted); }
header.page dd { margin: 0; overflow-wrap: anywhere; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.controls { margin-top: 10px; }
button { background: var(--panel); color: var(--fg); border: 1px solid var(--border); border-radius: 6px; padding: 3px 10px; cursor: pointer; font: inherit; font-size: 0.85em; }
main { padding-top: 12px; padding-bottom: 24px; }
.entry { border: 1px solid var(--border); border-radius: 8px; margin: 12px 0; padding: 10px 14px; background: var(--assistant); }
.entry.user { background: var(--user); }
.entry.summary, .entry.custom, .entry.system { background: var(--panel); }
.role { display: flex; gap: 8px; align-items: baseline; font-size: 0.85em; color: var(--muted); margin-bottom: 4px; }
.role .who { font-weight: 600; color: var(--fg); }
.role time { margin-left: auto; }
.label { background: var(--accent); color: #fff; border-radius: 10px; padding: 0 8px; }
.meta { color: var(--muted); font-size: 0.85em; margin: 6px 2px; }
.md { overflow-wrap: anywhere; }
[data-md] { white-space: pre-wrap; }
.al-left { text-align: left; } .al-center { text-align: center; } .al-right { text-align: right; }
.md p { margin: 0.5em 0; }
.md table { border-collapse: collapse; }
.md th, .md td { border: 1px solid var(--border); padding: 3px 8px; }
.md blockquote { margin: 0.5em 0; padding-left: 12px; border-left: 3px solid var(--border); color: var(--muted); }
.md-url { color: var(--muted); font-size: 0.9em; overflow-wrap: anywhere; }
.md-link { color: var(--accent); }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.88em; }
:not(pre) > code { background: var(--code-bg); padding: 1px 4px; border-radius: 4px; }
pre { background: var(--code-bg); border: 1px solid var(--border); border-radius: 6px; padding: 8px 10px; overflow-x: auto; margin: 6px 0; }
pre.text { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 480px; overflow-y: auto; }
pre.err { border-color: var(--fail); }
.code { position: relative; }
.code-lang { position: absolute; right: 8px; top: 4px; font-size: 0.75em; color: var(--muted); }
.tok-k { color: var(--tok-k); } .tok-s { color: var(--tok-s); } .tok-c { color: var(--tok-c); font-style: italic; } .tok-n { color: var(--tok-n); }
.tok-add { background: var(--add); display: inline-block; width: 100%; } .tok-del { background: var(--del); display: inline-block; width: 100%; }
details.block { border: 1px solid var(--border); border-radius: 6px; margin: 6px 0; padding: 4px 10px; background: var(--panel); }
details.block > summary { cursor: pointer; color: var(--muted); font-size: 0.9em; overflow-wrap: anywhere; }
details.block[open] > summary { margin-bottom: 4px; }
details.thinking .md { color: var(--muted); font-style: italic; }
details.failed { border-color: var(--fail); }
.sub { color: var(--muted); font-size: 0.8em; margin-top: 6px; }
.status { font-size: 0.8em; border-radius: 10px; padding: 0 6px; border: 1px solid currentColor; }
.status.ok { color: var(--ok); } .status.fail { color: var(--fail); } .status.pending { color: var(--muted); }
.error { color: var(--fail); border: 1px solid var(--fail); border-radius: 6px; padding: 4px 10px; margin: 6px 0; }
.image img { max-width: 100%; border: 1px solid var(--border); border-radius: 6px; }
.empty { color: var(--muted); }
footer { color: var(--muted); font-size: 0.8em; padding-bottom: 24px; }
`

// markdownJS renders the Markdown of the page in the browser (see the
// file's comment).
//
//go:embed markdown.js
var markdownJS string

// pageInit renders every element marked data-md (leaving its text as it is
// if rendering fails) and wires the expand / collapse buttons.
const pageInit = `(function () {
  var els = document.querySelectorAll("[data-md]");
  for (var k = 0; k < els.length; k++) {
    var el = els[k];
    try {
      var frag = mdRender(document, el.textContent);
      el.textContent = "";
      el.appendChild(frag);
      el.removeAttribute("data-md");
    } catch (e) {
      // The source stays readable as text.
    }
  }
  document.querySelectorAll("button[data-toggle]").forEach(function (b) {
    b.addEventListener("click", function () {
      var open = b.getAttribute("data-toggle") === "open";
      document.querySelectorAll("details").forEach(function (d) { d.open = open; });
    });
  });
})();
`

// pageAssets is the script of the page and the Content-Security-Policy that lets
// only it and the page's style sheet run: no other script, no event handler
// attribute, and nothing loaded from anywhere (images are data: URIs).
var pageAssets = lazy.Value[struct{ script, csp string }]{New: func() (p struct{ script, csp string }) {
	p.script = markdownJS + "\n" + pageInit
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	p.csp = "default-src 'none'; img-src data:; style-src " + hash(css) + "; script-src " + hash(p.script)
	return p
}}
