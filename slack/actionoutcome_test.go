package slack

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// TestActionAnsweredElsewhere: an action answered on the web has its
// message updated with what was decided, and a late click is told so.
func TestActionAnsweredElsewhere(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	web := hitl.WithCaller(context.Background(), hitl.Caller{Name: "bob", Channel: hitl.ChannelWeb, Role: hitl.RoleResponder})
	respond := func(id, value string) {
		t.Helper()
		if _, err := h.b.Respond(web, id, json.RawMessage(value)); err != nil {
			t.Fatalf("respond on the web: %v", err)
		}
	}

	edited := h.askAction("Bash", `{"command":"terraform apply"}`, nil)
	post, _ := h.waitPosted(edited)
	respond(edited.ID, `{"decision":"edit","args":{"command":"terraform plan"}}`)
	upd := h.waitUpdated(edited)
	if !strings.Contains(upd.Blocks(), "✏️ Edited and approved by *bob* via web at ") || !strings.Contains(upd.Blocks(), "UTC>: command → `terraform plan`") {
		t.Errorf("edited on the web:\n%s", upd.Blocks())
	}
	if got := upd.Form.Get("text"); got != "Action to review: terraform apply — edited and approved" {
		t.Errorf("updated text: %q", got)
	}
	wantNoActions(t, upd)
	h.interact(click(slackAlice, post, actionIDs(t, post)["Approve"], nil))
	eph := h.fake.WaitFor("chat.postEphemeral", 1, nil)[0]
	if !strings.Contains(eph.Form.Get("text"), "Already answered: ✏️ Edited and approved by *bob* via web") {
		t.Errorf("late click: %v", eph.Form)
	}

	// A rejection that makes a deny rule.
	denied := h.askAction("Bash", `{"command":"git push --force"}`, nil)
	h.waitPosted(denied)
	respond(denied.ID, `{"decision":"reject","message":"never force-push","always":{"match":{"arg":"command","prefix":"git push"}}}`)
	upd = h.waitUpdated(denied)
	blocks := upd.Blocks()
	if !strings.Contains(blocks, "❌ Rejected by *bob* via web at ") || !strings.Contains(blocks, "UTC>: never force-push") {
		t.Errorf("rejected on the web:\n%s", blocks)
	}
	if !strings.Contains(blocks, "🔁 From now on denied without asking: `command` starting with `git push` (rule `") {
		t.Errorf("the deny rule is not shown:\n%s", blocks)
	}

	// An edit of many lines: no summary inline, the diff below.
	write := h.askAction("Write", `{"file_path":"notes.md","content":"a\nb\nc\n"}`, nil)
	h.waitPosted(write)
	respond(write.ID, `{"decision":"edit","args":{"file_path":"notes.md","content":"a\nB\nc\n"}}`)
	upd = h.waitUpdated(write)
	if !strings.Contains(upd.Blocks(), "✏️ Edited and approved by *bob* via web at ") || strings.Contains(upd.Blocks(), "content →") {
		t.Errorf("multi-line edit:\n%s", upd.Blocks())
	}
	want := []string{"+a\n+b\n+c", "content\n a\n-b\n+B\n c"}
	if diff := cmp.Diff(want, code(t, upd.Blocks())); diff != "" {
		t.Errorf("the proposal and the edit's diff (-want +got):\n%s", diff)
	}

	// Respond on the web: the reply is shown.
	replied := h.askAction("Bash", `{"command":"make"}`, nil)
	h.waitPosted(replied)
	respond(replied.ID, `{"decision":"respond","message":"use *make check*"}`)
	if upd := h.waitUpdated(replied); !strings.Contains(upd.Blocks(), "💬 Answered instead by *bob* via web at ") || !strings.Contains(upd.Blocks(), ": use *make check*") {
		t.Errorf("respond on the web:\n%s", upd.Blocks())
	}
}

func TestActionExpiredDefault(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	in := h.askAction("Bash", `{"command":"make deploy"}`, func(r *hitl.CreateRequest) {
		r.Timeout, r.OnTimeout = 1, hitl.OnTimeoutDefault
		r.DefaultResponse = json.RawMessage(`{"decision":"reject","message":"nobody answered"}`)
	})
	h.waitPosted(in)
	upd := h.waitUpdated(in)
	if !strings.Contains(upd.Blocks(), "; the default answer was used: rejected: nobody answered") {
		t.Errorf("expired with a default:\n%s", upd.Blocks())
	}
	if got := upd.Form.Get("text"); got != "Action to review: make deploy — expired" {
		t.Errorf("updated text: %q", got)
	}
}

func TestEditSummary(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ diff, want string }{
		{`[{"op":"replace","path":"/command","value":"terraform plan"}]`, ": command → `terraform plan`"},
		{`[{"op":"add","path":"/dry_run","value":true},{"op":"remove","path":"/force"}]`, ": dry_run → `true`, force removed"},
		{`[{"op":"replace","path":"/a~1b","value":"x"}]`, ": a/b → `x`"},
		{`[{"op":"replace","path":"/command","value":"echo ` + "`date`" + `"}]`, ""},
		{`[{"op":"replace","path":"/content","value":"a\nb"}]`, ""},
		{`[{"op":"replace","path":"/x","value":"<!channel>"}]`, ": x → `&lt;!channel&gt;`"},
		{`null`, ""},
	} {
		if got := editSummary(json.RawMessage(c.diff)); got != c.want {
			t.Errorf("editSummary(%s): got %q, want %q", c.diff, got, c.want)
		}
	}
}
