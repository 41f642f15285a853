package export

import (
	"bytes"
	"encoding/json"
	"html"
	"math/rand"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/testenv"
)

// renderJS renders each Markdown text with the page's renderer
// (markdown.js) under Node.js, in a stand-in document
// (testdata/dom.js) that throws on any element or attribute the renderer
// must never create; an error is returned as "ERROR: ...". Where Node.js
// is not installed the tests are skipped, and under CI they fail (testenv).
func renderJS(t *testing.T, texts []string) []string {
	t.Helper()
	node := testenv.LookPath(t, "node") // the page's Markdown renderer runs under Node.js
	in, _ := json.Marshal(texts)
	cmd := exec.Command(node, "testdata/render.js", "markdown.js")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil || len(raw) != len(texts) {
		t.Fatalf("node output (%v): %.500s", err, out)
	}
	res := make([]string, len(raw))
	for i, r := range raw {
		var s string
		if json.Unmarshal(r, &s) == nil {
			res[i] = s
			continue
		}
		var e struct{ Error string }
		_ = json.Unmarshal(r, &e)
		res[i] = "ERROR: " + e.Error
	}
	return res
}

func renderOne(t *testing.T, text string) string {
	t.Helper()
	return renderJS(t, []string{text})[0]
}

// The Markdown of the fixture's page, rendered as the browser does.
func TestHTMLExportRendered(t *testing.T) {
	out := exportFixture(t)
	var texts []string
	for _, m := range regexp.MustCompile(`(?s)<div data-md="">(.*?)</div>`).FindAllStringSubmatch(out, -1) {
		texts = append(texts, html.UnescapeString(m[1]))
	}
	if len(texts) != 5 {
		t.Fatalf("%d Markdown texts in the page: %q", len(texts), texts)
	}
	rendered := strings.Join(renderJS(t, texts), "\n")
	for _, want := range []string{
		"Please check &lt;script&gt;alert(1)&lt;/script&gt;",  // user text escaped
		"&lt;img src=&#34;http://evil.example/i.png&#34;&gt;", // inline raw HTML shown as text
		"&lt;b&gt;bold&lt;/b&gt;",                             //
		`<span class="md-img">[image: pic]</span>`,            // remote image not loaded
		`<span class="md-link">docs</span> <span class="md-url">&lt;http://docs.example/a&gt;</span>`,
		"Secret <strong>plan</strong>",                                                                // rendered markdown
		`<div class="code"><div class="code-lang">go</div><pre><code><span class="tok-k">func</span>`, // highlighted code
		`<span class="tok-s">&#34;hi &lt;there&gt;&#34;</span>`,                                       //
		`<span class="tok-c">// note</span>`,                                                          //
		`<pre class="md-raw">&lt;div onclick=&#34;x()&#34;&gt;raw block&lt;/div&gt;</pre>`,
		"Earlier we <strong>did</strong> things.",
		"Final answer with a <span class=\"md-link\">link</span> <span class=\"md-url\">&lt;https://x.example&gt;</span> and <code>code</code>.",
	} {
		if !strings.Contains(rendered, want) {
			t.Errorf("missing %q in\n%s", want, rendered)
		}
	}
}

func TestMarkdownRenderer(t *testing.T) {
	cases := []struct{ in, want string }{
		{"# Title\n\nSome *em*, **strong**, ~~gone~~ and `code`.", "<h1>Title</h1><p>Some <em>em</em>, <strong>strong</strong>, <del>gone</del> and <code>code</code>.</p>"},
		{"Setext\n===\n\nsub\n---", "<h1>Setext</h1><h2>sub</h2>"},
		{"- a\n- b\n  - c\n\n1. x\n2. y", "<ul><li>a</li><li>b\n<ul><li>c</li></ul></li></ul><ol><li>x</li><li>y</li></ol>"},
		{"3. three\n4. four", `<ol start="3"><li>three</li><li>four</li></ol>`},
		{"- a\n\n- b", "<ul><li><p>a</p></li><li><p>b</p></li></ul>"},
		{"- [ ] todo\n- [x] done", `<ul><li><input disabled="" type="checkbox"> todo</li><li><input checked="" disabled="" type="checkbox"> done</li></ul>`},
		{"> quoted\nlazy\n\n---", "<blockquote><p>quoted\nlazy</p></blockquote><hr>"},
		{"| a | b |\n|:--|--:|\n| 1 | 2 |\n| x |", `<table><thead><tr><th class="al-left">a</th><th class="al-right">b</th></tr></thead><tbody><tr><td class="al-left">1</td><td class="al-right">2</td></tr><tr><td class="al-left">x</td><td></td></tr></tbody></table>`},
		{"line  \nbreak\\\nagain", "<p>line<br>\nbreak<br>\nagain</p>"},
		{"    indented\n    code", "<div class=\"code\"><pre><code>indented\ncode\n</code></pre></div>"},
		{"~~~\nfenced <b>\n~~~", "<div class=\"code\"><pre><code>fenced &lt;b&gt;\n</code></pre></div>"},
		{"[ref] and [text][ref]\n\n[ref]: https://r.example \"t\"", `<p><span class="md-link">ref</span> <span class="md-url">&lt;https://r.example&gt;</span> and <span class="md-link">text</span> <span class="md-url">&lt;https://r.example&gt;</span></p>`},
		{"<https://auto.example> <me@mail.example>", `<p><span class="md-link">https://auto.example</span> <span class="md-link">me@mail.example</span></p>`},
		{"&amp; &lt;tag&gt; &#60;script&#62; &copy; \\*not em\\*", "<p>&amp; &lt;tag&gt; &lt;script&gt; © *not em*</p>"},
		{"![dot](data:image/png;base64,iVBORw0KGgo=) ![svg](data:image/svg+xml;base64,PHN2Zz4=)",
			`<p><img src="data:image/png;base64,iVBORw0KGgo=" alt="dot"> <span class="md-img">[image: svg]</span> <span class="md-url">&lt;data:image/svg+xml;base64,PHN2Zz4=&gt;</span></p>`},
		// Everything a model could try: shown as text, never as markup.
		{"<script>alert(1)</script>", `<pre class="md-raw">&lt;script&gt;alert(1)&lt;/script&gt;</pre>`},
		{"x <img src=x onerror=alert(1)> <a href=\"javascript:alert(1)\">y</a>", "<p>x &lt;img src=x onerror=alert(1)&gt; &lt;a href=&#34;javascript:alert(1)&#34;&gt;y&lt;/a&gt;</p>"},
		{"[click](javascript:alert(1)) ![i](javascript:alert(1)) <javascript:alert(1)>", `<p><span class="md-link">click</span> <span class="md-url">&lt;javascript:alert(1)&gt;</span> <span class="md-img">[image: i]</span> <span class="md-url">&lt;javascript:alert(1)&gt;</span> <span class="md-link">javascript:alert(1)</span></p>`},
		{"![x](data:image/png;base64,AAAA\" onerror=\"alert(1))", `<p>![x](data:image/png;base64,AAAA&#34; onerror=&#34;alert(1))</p>`},
		{"<!-- comment --> <?php x ?> <![CDATA[y]]>", "<pre class=\"md-raw\">&lt;!-- comment --&gt; &lt;?php x ?&gt; &lt;![CDATA[y]]&gt;</pre>"},
		{"```html\n<style>body{display:none}</style>\n```", `<div class="code"><div class="code-lang">html</div><pre><code>&lt;style&gt;body{display:none}&lt;/style&gt;` + "\n</code></pre></div>"},
		// The highlighter.
		{"```go\nx := \"a<b\" // c\n```", `<div class="code"><div class="code-lang">go</div><pre><code>x := <span class="tok-s">&#34;a&lt;b&#34;</span> <span class="tok-c">// c</span>` + "\n</code></pre></div>"},
		{"```py\ndef f():\n  return 1\n```", `<div class="code"><div class="code-lang">py</div><pre><code><span class="tok-k">def</span> f():` + "\n" + `  <span class="tok-k">return</span> <span class="tok-n">1</span>` + "\n</code></pre></div>"},
		{"```diff\n+added\n-removed\n ctx\n```", `<div class="code"><div class="code-lang">diff</div><pre><code><span class="tok-add">+added` + "\n" + `</span><span class="tok-del">-removed` + "\n" + `</span> ctx` + "\n</code></pre></div>"},
		{"```unknown-lang\n<b>\n```", `<div class="code"><div class="code-lang">unknown-lang</div><pre><code>&lt;b&gt;` + "\n</code></pre></div>"},
		{"```js\n'unterminated\nnext\n```", `<div class="code"><div class="code-lang">js</div><pre><code><span class="tok-s">&#39;unterminated</span>` + "\nnext\n</code></pre></div>"},
		{"```constructor\n__proto__ toString\n```", `<div class="code"><div class="code-lang">constructor</div><pre><code>__proto__ toString` + "\n</code></pre></div>"},
	}
	var in []string
	for _, c := range cases {
		in = append(in, c.in)
	}
	got := renderJS(t, in)
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.in, got[i], c.want)
		}
	}
}

// Random Markdown of the constructs the renderer knows, mixed with markup
// and invalid input: the renderer never fails and never creates an
// element or attribute outside its list (the stand-in document throws).
func TestMarkdownRendererRandom(t *testing.T) {
	pieces := []string{"*", "**", "_", "~~", "~", "`", "```", "~~~", "[", "]", "(", ")", "![", "<", ">", "&amp;", "&#0;", "&#x110000;",
		"\\", "\n", "\n\n", " ", "  ", "\t", "- ", "* ", "1. ", "2) ", "# ", "> ", "|", "---", "===", "a", "foo", "<div>", "<!--", "-->",
		"<script>", "</script>", "<img src=x onerror=alert(1)>", "javascript:alert(1)", "data:image/png;base64,AA==", "http://x",
		":", "\"", "'", "[x]: /u\n", "    ", "- [ ] ", "| a | b |\n|---|---|\n", "\u2028", "\x00", "é", "😀", "__proto__", "constructor"}
	r := rand.New(rand.NewSource(5))
	n := 3000
	if testing.Short() {
		n = 300
	}
	in := make([]string, n)
	for i := range in {
		var b strings.Builder
		for k := r.Intn(40); k > 0; k-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		in[i] = b.String()
	}
	for i, out := range renderJS(t, in) {
		if strings.HasPrefix(out, "ERROR: ") {
			t.Fatalf("%q: %s", in[i], out)
		}
		if strings.Contains(strings.ToLower(out), "<script") {
			t.Fatalf("%q: a script element: %s", in[i], out)
		}
	}
}
