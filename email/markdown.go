package email

import (
	"bytes"
	"fmt"
	"html/template"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// A context is Markdown, rendered into the mail's HTML part as the inbox
// renders it: raw HTML escaped, unsafe links dropped, and images shown as
// links to them. A mail client loads an <img> when the mail is opened, so
// an agent could plant a tracking pixel that tells whoever serves it who
// read the question, and when.

// markdown renders contexts for mail; made when first used, not at every
// start of hitl (an agent's command hook starts it for each tool call).
var markdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(goldmark.WithRendererOptions(
		renderer.WithNodeRenderers(util.Prioritized(imageAsLink{}, 100)), // before the HTML renderer's 1000
	))
})

// renderMarkdown renders src for the mail's HTML part.
func renderMarkdown(src string) (template.HTML, error) {
	var buf bytes.Buffer
	if err := markdown().Convert([]byte(src), &buf); err != nil {
		return "", fmt.Errorf("render markdown: %w", err)
	}
	return template.HTML(buf.String()), nil // goldmark escapes raw HTML and drops unsafe links unless told otherwise
}

// imageAsLink renders a Markdown image as a link to it: its alt text (or,
// when it has none, its URL) linking to the image. An image whose URL is
// unsafe (javascript: and the like), or that is already inside a link, is
// its alt text alone.
type imageAsLink struct{}

// RegisterFuncs renders images.
func (imageAsLink) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindImage, renderImage)
}

// renderImage writes the link an image is shown as, around its alt text.
func renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Image)
	dest := util.URLEscape(n.Destination, true)
	if len(dest) == 0 || html.IsDangerousURL(dest) || inLink(n) {
		return ast.WalkContinue, nil // the alt text, as text
	}
	if !entering {
		_, _ = w.WriteString("</a>")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.Write(util.EscapeHTML(dest))
	_ = w.WriteByte('"')
	if n.Title != nil {
		_, _ = w.WriteString(` title="`)
		_, _ = w.Write(util.EscapeHTML(n.Title))
		_ = w.WriteByte('"')
	}
	_ = w.WriteByte('>')
	if !n.HasChildren() {
		_, _ = w.Write(util.EscapeHTML(dest))
	}
	return ast.WalkContinue, nil
}

// inLink reports whether n is inside a link.
func inLink(n ast.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Kind() == ast.KindLink {
			return true
		}
	}
	return false
}
