package export

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// Markdown rendering for the export. goldmark's HTML renderer escapes text,
// code and attributes; on top of that, this package's node renderers make
// sure nothing the model wrote can reach the page as markup or make it
// fetch anything when opened:
//   - raw HTML (inline or blocks) is shown as escaped text, not dropped;
//   - links are shown as their text followed by the address, with no href;
//   - images are shown as their alt text and address, except inline
//     data: images of the common raster types;
//   - code blocks are highlighted by this package.

var mdEngine = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList),
	goldmark.WithRendererOptions(
		renderer.WithNodeRenderers(util.Prioritized(safeRenderer{}, 100)),
	),
)

// renderMarkdown returns text as HTML.
func renderMarkdown(text string) string {
	var buf bytes.Buffer
	if err := mdEngine.Convert([]byte(text), &buf); err != nil {
		return "<pre>" + html.EscapeString(text) + "</pre>"
	}
	return buf.String()
}

type safeRenderer struct{}

func (safeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
	reg.Register(ast.KindLink, renderLink)
	reg.Register(ast.KindAutoLink, renderAutoLink)
	reg.Register(ast.KindImage, renderImage)
	reg.Register(ast.KindFencedCodeBlock, renderCodeBlock)
	reg.Register(ast.KindCodeBlock, renderCodeBlock)
}

func renderRawHTML(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		segs := n.(*ast.RawHTML).Segments
		for i := 0; i < segs.Len(); i++ {
			s := segs.At(i)
			_, _ = w.WriteString(html.EscapeString(string(s.Value(source))))
		}
	}
	return ast.WalkSkipChildren, nil
}

func renderHTMLBlock(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	b := n.(*ast.HTMLBlock)
	var text strings.Builder
	lines := b.Lines()
	for i := 0; i < lines.Len(); i++ {
		s := lines.At(i)
		text.Write(s.Value(source))
	}
	if b.HasClosure() {
		text.Write(b.ClosureLine.Value(source))
	}
	_, _ = w.WriteString(`<pre class="md-raw">` + html.EscapeString(strings.TrimRight(text.String(), "\n")) + "</pre>\n")
	return ast.WalkSkipChildren, nil
}

func renderLink(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	l := n.(*ast.Link)
	if entering {
		_, _ = w.WriteString(`<span class="md-link">`)
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`</span>`)
	if dest := string(l.Destination); dest != "" && dest != plainText(n, source) {
		_, _ = w.WriteString(` <span class="md-url">&lt;` + html.EscapeString(dest) + `&gt;</span>`)
	}
	return ast.WalkContinue, nil
}

func renderAutoLink(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		_, _ = w.WriteString(`<span class="md-link">` + html.EscapeString(string(n.(*ast.AutoLink).Label(source))) + `</span>`)
	}
	return ast.WalkSkipChildren, nil
}

// dataImage matches the inline images the export keeps.
var dataImage = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^data:image/(png|jpeg|jpg|gif|webp);base64,[A-Za-z0-9+/=\s]+$`)
})

func renderImage(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	img := n.(*ast.Image)
	alt := plainText(n, source)
	dest := string(img.Destination)
	if dataImage().MatchString(dest) {
		_, _ = w.WriteString(`<img src="` + html.EscapeString(dest) + `" alt="` + html.EscapeString(alt) + `">`)
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.WriteString(`<span class="md-img">[image: ` + html.EscapeString(alt) + `]</span>`)
	if dest != "" {
		_, _ = w.WriteString(` <span class="md-url">&lt;` + html.EscapeString(dest) + `&gt;</span>`)
	}
	return ast.WalkSkipChildren, nil
}

func renderCodeBlock(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	language := ""
	if f, ok := n.(*ast.FencedCodeBlock); ok && f.Info != nil {
		language = string(f.Language(source))
	}
	var code strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		s := lines.At(i)
		code.Write(s.Value(source))
	}
	_, _ = w.WriteString(codeBlock(code.String(), language))
	return ast.WalkSkipChildren, nil
}

// codeBlock is a highlighted <pre> with its language named.
func codeBlock(code, language string) string {
	var b strings.Builder
	b.WriteString(`<div class="code">`)
	if language != "" {
		b.WriteString(`<div class="code-lang">` + html.EscapeString(language) + `</div>`)
	}
	b.WriteString(`<pre><code>`)
	b.WriteString(highlight(code, language))
	b.WriteString("</code></pre></div>\n")
	return b.String()
}

// plainText concatenates the text under a node.
func plainText(n ast.Node, source []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(source))
		case *ast.String:
			b.Write(t.Value)
		case *ast.CodeSpan:
			for ch := t.FirstChild(); ch != nil; ch = ch.NextSibling() {
				if tx, ok := ch.(*ast.Text); ok {
					b.Write(tx.Segment.Value(source))
				}
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}
