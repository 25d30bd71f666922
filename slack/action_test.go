package slack

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// askAction asks for a review of the action name with args (JSON) from
// the agent claude-code; edit changes the request first.
func (h *harness) askAction(name, args string, edit func(*hitl.CreateRequest)) *hitl.Interaction {
	h.t.Helper()
	req := hitl.CreateRequest{Type: hitl.TypeAction, SourceAgent: "claude-code",
		Action: &hitl.Action{Name: name, Args: json.RawMessage(args)}}
	if edit != nil {
		edit(&req)
	}
	return h.ask(req)
}

// textObject is a text a message shows, and how Slack reads it.
type textObject struct {
	kind string // mrkdwn, plain_text, or rich (a rich text element)
	text string
}

// texts returns every text in blocks (JSON), in order.
func texts(t *testing.T, blocks string) []textObject {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(blocks), &v); err != nil {
		t.Fatalf("blocks: %v", err)
	}
	var out []textObject
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			typ, _ := x["type"].(string)
			if text, ok := x["text"].(string); ok {
				kind := typ
				if typ == "text" {
					kind = "rich"
				}
				out = append(out, textObject{kind, text})
			}
			for _, k := range []string{"text", "fields", "elements", "blocks", "element", "options", "label", "hint"} {
				if c, ok := x[k]; ok {
					walk(c)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// code returns the texts of a message's preformatted blocks.
func code(t *testing.T, blocks string) []string {
	t.Helper()
	var out []string
	for _, x := range texts(t, blocks) {
		if x.kind == "rich" {
			out = append(out, x.text)
		}
	}
	return out
}

// fieldPairs returns the argument fields of a message: name, value.
func fieldPairs(t *testing.T, blocks string) [][2]string {
	t.Helper()
	var bs []struct {
		Fields []struct{ Type, Text string } `json:"fields"`
	}
	if err := json.Unmarshal([]byte(blocks), &bs); err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, b := range bs {
		for i := 0; i+1 < len(b.Fields); i += 2 {
			k, v := b.Fields[i], b.Fields[i+1]
			if k.Type != "mrkdwn" || v.Type != "plain_text" {
				t.Errorf("fields %q, %q: got %s and %s, want the name in mrkdwn and the value in plain_text", k.Text, v.Text, k.Type, v.Type)
			}
			out = append(out, [2]string{k.Text, v.Text})
		}
	}
	return out
}

// buttonTexts returns the texts of a message's buttons, in order.
func buttonTexts(t *testing.T, blocks string) []string {
	t.Helper()
	var bs []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type string `json:"type"`
			Text json.RawMessage
		} `json:"elements"`
	}
	if err := json.Unmarshal([]byte(blocks), &bs); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range bs {
		for _, e := range b.Elements {
			var text struct{ Text string }
			if b.Type == "actions" && e.Type == "button" && json.Unmarshal(e.Text, &text) == nil {
				out = append(out, text.Text)
			}
		}
	}
	return out
}

func TestActionCardBash(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	in := h.askAction("Bash", `{"command":"terraform apply -auto-approve","description":"Apply the plan","timeout":600}`,
		func(r *hitl.CreateRequest) {
			r.Action.Description = "Apply the **staging** plan"
			r.Action.Kind, r.Action.Input = hitl.KindShell, hitl.ShellInput("terraform apply -auto-approve", "/srv/infra")
		})
	post, _ := h.waitPosted(in)
	blocks := post.Blocks()

	for _, want := range []string{`"text":"Action to review"`, `"text":"terraform apply -auto-approve","type":"mrkdwn"`, "*Bash*  ·  shell command  ·  🤖 claude-code\\nApply the **staging** plan"} {
		if !strings.Contains(blocks, want) {
			t.Errorf("card lacks %s:\n%s", want, blocks)
		}
	}
	if got, want := code(t, blocks), []string{"terraform apply -auto-approve"}; !cmp.Equal(got, want) {
		t.Errorf("code: got %q, want the command as it runs %q", got, want)
	}
	if diff := cmp.Diff([][2]string{{"*description*", "Apply the plan"}, {"*timeout*", "600"}}, fieldPairs(t, blocks)); diff != "" {
		t.Errorf("the other arguments as fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Approve", "Edit", "Reject", "Respond", "Always allow", "Open in hitl"}, buttonTexts(t, blocks)); diff != "" {
		t.Errorf("buttons (-want +got):\n%s", diff)
	}
	ids := actionIDs(t, post)
	seen := map[string]bool{}
	for _, label := range []string{"Approve", "Edit", "Reject", "Respond", "Always allow"} {
		id := ids[label]
		if id == "" || seen[id] || strings.Contains(strings.ToLower(id), "approve") || strings.Contains(strings.ToLower(id), "reject") {
			t.Errorf("button %s: action_id %q; want an opaque token of its own", label, id)
		}
		seen[id] = true
	}
	if !strings.Contains(blocks, "or reply in this thread: `approve`, `edit` and a JSON object, `reject` and a reason, or anything else to answer instead") {
		t.Errorf("card lacks the thread hint:\n%s", blocks)
	}
	if text := post.Form.Get("text"); text != "Action to review: terraform apply -auto-approve" {
		t.Errorf("notification text: got %q", text)
	}
}

func TestActionCardWriteAndEdit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	var lines []string
	for i := 1; i <= 50; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	content, _ := json.Marshal(strings.Join(lines, "\n") + "\n")
	write := h.askAction("Write", `{"file_path":"/repo/docs/notes.md","content":`+string(content)+`}`, nil)
	post, _ := h.waitPosted(write)
	blocks := post.Blocks()
	got := code(t, blocks)
	if len(got) != 1 {
		t.Fatalf("Write: want one diff, got %q", got)
	}
	want := "+" + strings.Join(lines[:maxCodeLines], "\n+")
	if got[0] != want {
		t.Errorf("Write diff: got\n%s\nwant the first %d lines added:\n%s", got[0], maxCodeLines, want)
	}
	if more := "…and 20 more lines — <https://hitl.example.com/?interaction=" + write.ID + "|open in hitl>"; !strings.Contains(blocks, more) {
		t.Errorf("Write card lacks %q:\n%s", more, blocks)
	}
	if diff := cmp.Diff([][2]string{{"*file_path*", "/repo/docs/notes.md"}}, fieldPairs(t, blocks)); diff != "" {
		t.Errorf("Write fields (-want +got):\n%s", diff)
	}

	edit := h.askAction("Edit", `{"file_path":"src/main.go","old_string":"func main() {\n\tfmt.Println(\"hi\")\n}","new_string":"func main() {\n\tfmt.Println(\"hello\")\n\tos.Exit(0)\n}","replace_all":false}`, nil)
	post, _ = h.waitPosted(edit)
	wantDiff := " func main() {\n-\tfmt.Println(\"hi\")\n+\tfmt.Println(\"hello\")\n+\tos.Exit(0)\n }"
	if got := code(t, post.Blocks()); !cmp.Equal(got, []string{wantDiff}) {
		t.Errorf("Edit diff: got %q, want %q", got, wantDiff)
	}
	if strings.Contains(post.Blocks(), "more line") {
		t.Errorf("a short diff says it was cut:\n%s", post.Blocks())
	}
	if diff := cmp.Diff([][2]string{{"*file_path*", "src/main.go"}, {"*replace_all*", "false"}}, fieldPairs(t, post.Blocks())); diff != "" {
		t.Errorf("Edit fields (-want +got):\n%s", diff)
	}

	multi := h.askAction("MultiEdit", `{"file_path":"a.txt","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d"}]}`, nil)
	post, _ = h.waitPosted(multi)
	if got, want := code(t, post.Blocks()), []string{"@@ edit 1 of 2 @@\n-a\n+b\n@@ edit 2 of 2 @@\n-c\n+d"}; !cmp.Equal(got, want) {
		t.Errorf("MultiEdit diff: got %q, want %q", got, want)
	}
}

func TestActionCardGeneric(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	long := strings.Repeat("x", 400)
	in := h.askAction("send_email", `{"to":"ops@example.com","subject":"*Weekly* report :tada:","body":"`+long+`","cc":["a@example.com"],"priority":2}`,
		func(r *hitl.CreateRequest) {
			r.SourceAgent = ""
			r.Decisions = []hitl.Decision{hitl.DecisionApprove, hitl.DecisionReject}
		})
	post, _ := h.waitPosted(in)
	blocks := post.Blocks()
	want := [][2]string{
		{"*to*", "ops@example.com"}, {"*subject*", "*Weekly* report :tada:"}, {"*body*", strings.Repeat("x", maxArgValue-1) + "…"},
		{"*cc*", `["a@example.com"]`}, {"*priority*", "2"},
	}
	if diff := cmp.Diff(want, fieldPairs(t, blocks)); diff != "" {
		t.Errorf("fields, values as plain text, long ones cut (-want +got):\n%s", diff)
	}
	if code(t, blocks) != nil {
		t.Errorf("a generic action shows code: %q", code(t, blocks))
	}
	if !strings.Contains(blocks, "long values are cut short — <https://hitl.example.com/?interaction="+in.ID+"|open in hitl>") {
		t.Errorf("card does not say a value was cut:\n%s", blocks)
	}
	// Only the decisions allowed; no Always allow without an agent to scope it to.
	if diff := cmp.Diff([]string{"Approve", "Reject", "Open in hitl"}, buttonTexts(t, blocks)); diff != "" {
		t.Errorf("buttons (-want +got):\n%s", diff)
	}
	if !strings.Contains(blocks, "or reply in this thread: `approve` or `reject` and a reason") {
		t.Errorf("thread hint:\n%s", blocks)
	}

	// Twenty arguments fit; the rest are counted.
	var args []string
	for i := range 23 {
		args = append(args, fmt.Sprintf(`"a%02d":%d`, i, i))
	}
	many := h.askAction("configure", "{"+strings.Join(args, ",")+"}", nil)
	post, _ = h.waitPosted(many)
	if n := len(fieldPairs(t, post.Blocks())); n != maxArgPairs*maxArgSections {
		t.Errorf("23 arguments: %d shown, want %d", n, maxArgPairs*maxArgSections)
	}
	if !strings.Contains(post.Blocks(), "…and 3 more arguments — <https://hitl.example.com/") {
		t.Errorf("card does not count the arguments left out:\n%s", post.Blocks())
	}
}

// TestActionHostileText: nothing an agent puts in an action reaches Slack
// as markup: a command, a value, a name, a description or an agent cannot
// alert the channel, mention anyone or disguise a link; code and values
// are shown as they are.
func TestActionHostileText(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	const evil = "<!channel> <@U0BOSS> <https://evil.example|docs> & ``` *x*"
	args, _ := json.Marshal(map[string]string{"command": "echo '" + evil + "'", evil: evil})
	in := h.askAction("Bash", string(args), func(r *hitl.CreateRequest) {
		r.SourceAgent = "<!here>"
		r.Action.Description = evil
		r.Question = evil
	})
	post, _ := h.waitPosted(in)
	check := func(what, blocks string) {
		t.Helper()
		for _, x := range texts(t, blocks) {
			rest := strings.ReplaceAll(x.text, "<!date^", "")
			if x.kind == "mrkdwn" && (strings.Contains(rest, "<!") || strings.Contains(rest, "<@") || strings.Contains(rest, "|docs>")) {
				t.Errorf("%s: markup got through in mrkdwn %q", what, x.text)
			}
		}
	}
	check("card", post.Blocks())
	if got := code(t, post.Blocks()); len(got) != 1 || got[0] != "echo '"+evil+"'" {
		t.Errorf("the command is not shown as it runs: %q", got)
	}
	pairs := fieldPairs(t, post.Blocks())
	if len(pairs) != 1 || pairs[0][1] != evil || !strings.Contains(pairs[0][0], "&lt;!channel&gt;") {
		t.Errorf("hostile argument: got %q, want the name escaped and the value as plain text", pairs)
	}
	if strings.Contains(post.Form.Get("text"), "<") {
		t.Errorf("notification text: %q", post.Form.Get("text"))
	}

	// The reason of a rejection is shown, escaped.
	view := h.openModal(post, "Reject")
	check("reject modal", mustJSON(t, view["blocks"]))
	h.submit(view, map[string]any{blockMessage: map[string]any{valueAction: map[string]any{"type": "plain_text_input", "value": evil}}})
	h.waitEnded(in.ID)
	upd := h.waitUpdated(in)
	check("updated message", upd.Blocks())
	if !strings.Contains(upd.Blocks(), "❌ Rejected by *alice* via slack at ") || !strings.Contains(upd.Blocks(), ": &lt;!channel&gt; &lt;@U0BOSS&gt;") {
		t.Errorf("the reason is not shown, escaped:\n%s", upd.Blocks())
	}
}

// mustJSON encodes v without HTML escapes.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

func TestLineDiff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		old, new string
		want     []string
	}{
		{"", "a\nb\n", []string{"+a", "+b"}},
		{"a\nb", "", []string{"-a", "-b"}},
		{"a\nb\nc", "a\nc", []string{" a", "-b", " c"}},
		{"a\nb\nc", "a\nx\nc", []string{" a", "-b", "+x", " c"}},
		{"same", "same", []string{" same"}},
	} {
		if got := lineDiff(c.old, c.new); !cmp.Equal(got, c.want) {
			t.Errorf("lineDiff(%q, %q): got %q, want %q", c.old, c.new, got, c.want)
		}
	}
	// Too large to compare line by line: all removed, then all added.
	big := strings.Repeat("l\n", 600)
	if got := lineDiff(big, big+"m\n"); len(got) != 1201 || got[0] != "-l" || got[600] != "+l" {
		t.Errorf("large diff: got %d lines starting %q", len(got), got[:2])
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("y", maxCodeChars+10)
	for _, c := range []struct {
		in   string
		want string
		more int
	}{
		{"a\nb", "a\nb", 0},
		{strings.Repeat("l\n", 40) + "l", strings.TrimSuffix(strings.Repeat("l\n", maxCodeLines), "\n"), 41 - maxCodeLines},
		{long + "\nz", long[:maxCodeChars-1] + "…", 2},
		{"a\n" + long, "a", 1},
	} {
		got, more := clip(c.in)
		if got != c.want || more != c.more {
			t.Errorf("clip(%.20q…): got %.30q… and %d more, want %.30q… and %d", c.in, got, more, c.want, c.more)
		}
	}
}

// TestActionCardWithinSlackLimits: however large what an agent sends,
// the card and its outcome stay within Block Kit's limits (50 blocks,
// 3,000 characters of section text, 2,000 of a field), escapes included.
func TestActionCardWithinSlackLimits(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	lt := func(n int) string { return strings.Repeat("<", n) }
	args := map[string]string{"command": strings.Repeat(lt(200)+"\n", 100)}
	for i := range 30 {
		args[fmt.Sprintf("%s%02d", lt(190), i)] = lt(5000)
	}
	in := h.askAction("Bash", mustJSON(t, args), func(r *hitl.CreateRequest) {
		r.SourceAgent = strings.Repeat("&", 200)
		r.Action.Name = lt(200)
		r.Action.Description = lt(hitl.MaxActionDescriptionLen)
		r.Question = lt(3000)
	})
	post, _ := h.waitPosted(in)
	withinLimits(t, "card", post.Blocks())
	view := h.openModal(post, "Reject")
	withinLimits(t, "reject modal", mustJSON(t, view["blocks"]))
	h.submit(view, map[string]any{blockMessage: text(lt(3000))})
	h.waitEnded(in.ID)
	withinLimits(t, "updated message", h.waitUpdated(in).Blocks())
}

func withinLimits(t *testing.T, what, blocks string) {
	t.Helper()
	var bs []struct {
		Text   *struct{ Text string }  `json:"text"`
		Fields []struct{ Text string } `json:"fields"`
	}
	if err := json.Unmarshal([]byte(blocks), &bs); err != nil {
		t.Fatal(err)
	}
	if len(bs) > 50 {
		t.Errorf("%s: %d blocks", what, len(bs))
	}
	for _, b := range bs {
		if b.Text != nil && len([]rune(b.Text.Text)) > maxSectionText {
			t.Errorf("%s: a text of %d characters: %.80s…", what, len([]rune(b.Text.Text)), b.Text.Text)
		}
		for _, f := range b.Fields {
			if len([]rune(f.Text)) > 2000 {
				t.Errorf("%s: a field of %d characters", what, len([]rune(f.Text)))
			}
		}
	}
}
