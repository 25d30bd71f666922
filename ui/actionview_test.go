package ui_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// diffLines returns the lines of the diffs under sel, each as its sign
// and its text (without what only screen readers hear).
func diffLines(p *page, sel string) []string {
	p.t.Helper()
	return eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll(%s)].map(l =>
		l.querySelector(".diff-sign").textContent.trim() +
		[...l.querySelector(".diff-text").childNodes].filter(n => !n.classList?.contains("sr-only")).map(n => n.textContent).join(""))`,
		js(sel+" .diff-line")))
}

// TestActionDiffs: a Write is the new content, every line added; an Edit
// is the line diff from old_string to new_string; a MultiEdit is one diff
// per edit; each names the file, and replace_all is said.
func TestActionDiffs(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	write := srv.askAction(t, "Write", map[string]any{"file_path": "/srv/notes/todo.md", "content": "# Todo\n\n- ship it\n"}, nil)
	edit := srv.askAction(t, "Edit", map[string]any{
		"file_path":   "/srv/app/main.go",
		"old_string":  "a := 1\nb := 2\nc := 3\n",
		"new_string":  "a := 1\nb := 20\nc := 3\nd := 4\n",
		"replace_all": true,
	}, nil)
	multi := srv.askAction(t, "MultiEdit", map[string]any{
		"file_path": "/srv/app/README.md",
		"edits": []map[string]any{
			{"old_string": "v1", "new_string": "v2"},
			{"old_string": "old\nsame", "new_string": "same", "replace_all": false},
		},
	}, nil)
	p := openPage(t, srv)
	for _, id := range []string{write, edit, multi} {
		p.waitCard(id)
	}
	for _, c := range []struct {
		id    string
		sel   string
		lines []string
	}{
		{write, ".args", []string{"+# Todo", "+", "+- ship it"}},
		{edit, ".args", []string{"a := 1", "-b := 2", "+b := 20", "c := 3", "+d := 4"}},
		{multi, ".args .diff:nth-of-type(1)", []string{"-v1", "+v2"}},
		{multi, ".args .diff:nth-of-type(2)", []string{"-old", "same"}},
	} {
		if got := diffLines(p, in(c.id, c.sel)); !slices.Equal(got, c.lines) {
			t.Errorf("%s diff %q, want %q", c.sel, got, c.lines)
		}
	}
	for id, want := range map[string]string{
		write: "New content/srv/notes/todo.md3 lines added",
		edit:  "/srv/app/main.go2 lines added, 1 line removed; every occurrence",
	} {
		if got := p.text(in(id, ".code-title")); got != want {
			t.Errorf("diff title %q, want %q", got, want)
		}
	}
	titles := eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll(%s)].map(e => e.textContent)`, js(in(multi, ".code-title-what"))))
	if want := []string{"Edit 1 of 2", "Edit 2 of 2"}; !slices.Equal(titles, want) {
		t.Errorf("MultiEdit titles %q, want %q", titles, want)
	}
	// The sign is not the only cue: removed and added lines are del and
	// ins, with words for screen readers.
	if got := p.text(in(edit, ".diff-del .sr-only")); got != "Removed: " {
		t.Errorf("removed line's spoken prefix %q", got)
	}
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).tagName`, js(in(edit, ".diff-add .diff-text")))); got != "INS" {
		t.Errorf("an added line is a %s, want INS", got)
	}
	// A diff is a focusable, labelled region.
	if got := eval[string](p, fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e.getAttribute("role") + " " + e.tabIndex + " " + e.getAttribute("aria-label"); })()`,
		js(in(edit, ".diff-body")))); got != "region 0 Edit: /srv/app/main.go" {
		t.Errorf("diff region: %s", got)
	}
}

// TestActionKeyValue: another tool's arguments are keys and values, long
// ones folded in a details element; characters that would not show are
// shown by name, in values and in commands.
func TestActionKeyValue(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	long := strings.Repeat("word ", 60)
	hdrs := map[string]any{"X-Priority": "1", "X-Mailer": "hitl", "X-Trace": strings.Repeat("t", 80)}
	headers, _ := json.Marshal(hdrs) // keys sorted, as the page gets them
	id := srv.askAction(t, "send_email", map[string]any{
		"to":      "ops@example.com",
		"body":    "line 1\nline 2\nline 3\nline 4",
		"note":    long,
		"retries": 3,
		"headers": hdrs,
		"file":    "invoice\u202Efdp.exe",
	}, nil)
	bash := srv.askAction(t, "Bash", map[string]any{"command": "echo ok\u200b && true"}, nil)
	p := openPage(t, srv)
	p.waitCard(id)
	p.waitCard(bash)
	got := eval[map[string]string](p, fmt.Sprintf(`Object.fromEntries([...document.querySelectorAll(%s)].map(dt => [dt.textContent,
		dt.nextElementSibling.querySelector("details") ? "folded: " + dt.nextElementSibling.querySelector("summary").textContent : dt.nextElementSibling.textContent]))`,
		js(in(id, ".args-kv > dt"))))
	want := map[string]string{
		"to":      "ops@example.com",
		"retries": "3",
		"body":    "folded: line 1 … (4 lines, 27 characters)",
		"note":    "folded: " + strings.Repeat("word ", 16)[:79] + "… (1 line, 300 characters)",
		"headers": "folded: " + string(headers[:60]) + " (3 fields)",
		"file":    "invoiceU+202E (invisible character)fdp.exe",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s shown as %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("keys %v, want %d", got, len(want))
	}
	// Unfolded, a long value is all there, as a focusable region.
	full := eval[string](p, fmt.Sprintf(`(() => { const d = [...document.querySelectorAll(%s)].find(d => d.closest("dd").previousElementSibling.textContent === "note");
		d.open = true; return d.querySelector("pre[role=region][tabindex='0'] code").textContent; })()`, js(in(id, ".args-kv details"))))
	if full != long {
		t.Errorf("unfolded note %q, want the whole value", full)
	}
	if got := p.text(in(bash, ".code-warn")); !strings.Contains(got, "invisible characters") {
		t.Errorf("no warning on a command with a zero-width space: %q", got)
	}
	if got := p.text(in(bash, ".hidden-char")); !strings.HasPrefix(got, "U+200B") {
		t.Errorf("zero-width space shown as %q", got)
	}
}

// TestLineDiff checks the page's line diff against a reference: on random
// pairs of texts, the diff's common and removed lines give back the first
// text, its common and added lines the second, and it keeps as many lines
// in common as the longest common subsequence has.
func TestLineDiff(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	p := openPage(t, srv)
	rng := rand.New(rand.NewPCG(17, 42))
	text := func() string {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString([]string{"a", "b", "c", "", "d e"}[rng.IntN(5)])
			b.WriteString("\n")
		}
		if rng.IntN(3) == 0 {
			b.WriteString("tail")
		}
		return b.String()
	}
	pairs := [][2]string{{"", ""}, {"", "x"}, {"x", ""}, {"a\nb", "a\nb\n"}, {"same\n", "same\n"}}
	for range 300 {
		pairs = append(pairs, [2]string{text(), text()})
	}
	data, _ := json.Marshal(pairs)
	type op struct {
		Op   string `json:"op"`
		Text string `json:"text"`
		EOL  bool   `json:"eol"`
	}
	results := eval[[][]op](p, fmt.Sprintf(`import(document.querySelector("script[type=module]").src.replace("app.js", "diff.js"))
		.then(m => %s.map(([a, b]) => m.lineDiff(a, b)))`, data))
	for i, pair := range pairs {
		a, b := pair[0], pair[1]
		var fromA, fromB strings.Builder
		common := 0
		for _, o := range results[i] {
			l := o.Text
			if o.EOL {
				l += "\n"
			}
			switch o.Op {
			case " ":
				fromA.WriteString(l)
				fromB.WriteString(l)
				common++
			case "-":
				fromA.WriteString(l)
			case "+":
				fromB.WriteString(l)
			default:
				t.Fatalf("op %q", o.Op)
			}
		}
		if fromA.String() != a || fromB.String() != b {
			t.Errorf("diff of %q and %q gives back %q and %q", a, b, fromA.String(), fromB.String())
		}
		if want := lcsLen(splitLines(a), splitLines(b)); common != want {
			t.Errorf("diff of %q and %q keeps %d lines, want %d", a, b, common, want)
		}
	}
}

// splitLines splits s into lines that keep their line break.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// lcsLen is the length of the longest common subsequence of a and b.
func lcsLen(a, b []string) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

// TestActionHostileArgs: an action's name, description and arguments
// (keys, values, a command, a file's path and content) are shown as text,
// never run or made into elements.
func TestActionHostileArgs(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	const payload = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>`
	ids := []string{
		srv.askAction(t, "Bash", map[string]any{"command": "echo " + payload, payload: payload}, nil),
		srv.askAction(t, "Write", map[string]any{"file_path": "/tmp/" + payload, "content": payload + "\n<svg onload=window.__xss=3>"}, nil),
		srv.ask(t, map[string]any{"interaction_type": "action", "source_agent": payload,
			"action": map[string]any{"name": payload, "description": payload, "args": map[string]any{payload: []string{payload}}}}),
	}
	p := openPage(t, srv)
	for _, id := range ids {
		p.waitCard(id)
		p.click(id, ".btn-always") // the rule's preview quotes them too
	}
	p.do(chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("details").forEach(d => d.open = true)`))
	if got := eval[string](p, `String(window.__xss)`); got != "undefined" {
		t.Errorf("window.__xss = %s: the payload ran", got)
	}
	for _, sel := range []string{"img", "script", "svg[onload]", "[onerror]"} {
		if n := eval[int](p, fmt.Sprintf(`document.querySelectorAll(%s).length`, js("#cards "+sel))); n != 0 {
			t.Errorf("%d %s elements made from the agent's text", n, sel)
		}
	}
	if got := p.text(in(ids[0], ".code-command code")); got != "echo "+payload {
		t.Errorf("command shown as %q", got)
	}
}
