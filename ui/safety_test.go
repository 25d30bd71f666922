package ui_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

func TestHostileTextIsShownNotRun(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	question := `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script> Approve?`
	context := "<img src=x onerror=window.__xss=3> <svg onload=window.__xss=4></svg>\n\n" +
		"[click me](javascript:window.__xss=5) <a href=\"javascript:window.__xss=6\">raw</a>\n\n" +
		"**bold** and [docs](https://example.com/a_(b)) and `<b>code</b>`"
	id := srv.ask(t, map[string]any{
		"interaction_type": "single_choice",
		"question":         question,
		"context":          context,
		"options":          []map[string]any{{"key": "a", "label": `<img src=x onerror=window.__xss=7>`, "description": `<script>window.__xss=8</script>`}, {"key": "b", "label": "B"}},
	})
	p := openPage(t, srv)
	p.waitCard(id)
	p.do(chromedp.Click(chromedp.CSS(card(id) + " .md-unsafe-link")))

	if got := eval[string](p, `String(window.__xss)`); got != "undefined" {
		t.Errorf("window.__xss = %s: the payload ran", got)
	}
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).textContent`, js(card(id)+" .question"))); got != question {
		t.Errorf("question shown as %q, want the text as sent", got)
	}
	for _, sel := range []string{"img", "script", "svg", "iframe", "[onerror]", "[onload]", `a[href^="javascript"]`} {
		n := eval[int](p, fmt.Sprintf(`document.querySelectorAll(%s).length`, js(card(id)+" :is(.question, .context, .choices) "+sel)))
		if n != 0 {
			t.Errorf("%d %s elements made from the agent's text", n, sel)
		}
	}
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).textContent`, js(card(id)+" .context code"))); got != "<b>code</b>" {
		t.Errorf("inline code = %q", got)
	}
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).textContent`, js(card(id)+" .context strong"))); got != "bold" {
		t.Errorf("strong = %q", got)
	}
	links := eval[[]map[string]string](p, fmt.Sprintf(`[...document.querySelectorAll(%s)].map(a => ({href: a.href, target: a.target, rel: a.rel}))`, js(card(id)+" .context a")))
	want := map[string]string{"href": "https://example.com/a_(b)", "target": "_blank", "rel": "noopener noreferrer"}
	if len(links) != 1 || fmt.Sprint(links[0]) != fmt.Sprint(want) {
		t.Errorf("links = %v, want only %v", links, want)
	}
}
