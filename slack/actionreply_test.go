package slack

import (
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

func TestActionReplyReading(t *testing.T) {
	t.Parallel()
	all := &hitl.Interaction{Type: hitl.TypeAction, Status: hitl.StatusPending, Decisions: hitl.AllDecisions()}
	noRespond := &hitl.Interaction{Type: hitl.TypeAction, Status: hitl.StatusPending, Decisions: []hitl.Decision{hitl.DecisionApprove, hitl.DecisionReject}}
	for _, c := range []struct {
		in         *hitl.Interaction
		reply      string
		want, help string
	}{
		{all, "approve", `{"decision":"approve"}`, ""},
		{all, "Yes!", `{"decision":"approve"}`, ""},
		{all, "LGTM", `{"decision":"respond","message":"LGTM"}`, ""},
		{all, "yes, but use --dry-run", `{"decision":"respond","message":"yes, but use --dry-run"}`, ""},
		{all, "reject", `{"decision":"reject"}`, ""},
		{all, "No: not on a Friday", `{"decision":"reject","message":"not on a Friday"}`, ""},
		{all, "deny\nthe plan\nis stale", `{"decision":"reject","message":"the plan\nis stale"}`, ""},
		{all, `edit {"command": "make check"}`, `{"decision":"edit","args":{"command":"make check"}}`, ""},
		{all, "edit ```json\n{\"command\": \"ls\"}\n```", `{"decision":"edit","args":{"command":"ls"}}`, ""},
		{all, "edit `{\"a\":1}`", `{"decision":"edit","args":{"a":1}}`, ""},
		{all, "edit please", "", "Not valid JSON"},
		{all, "edit [1]", "", "must be a JSON object"},
		{all, "respond run the tests first", `{"decision":"respond","message":"run the tests first"}`, ""},
		{all, "what does it do?", `{"decision":"respond","message":"what does it do?"}`, ""},
		{noRespond, "what does it do?", "", "That reply does not answer this action: reply `approve` or `reject` and a reason."},
		{noRespond, "respond x", `{"decision":"respond","message":"x"}`, ""}, // the engine refuses it, and says why
	} {
		got, help := actionReply(c.in, c.reply)
		if string(got) != c.want || !strings.Contains(help, c.help) || (c.help == "") != (help == "") {
			t.Errorf("reply %q: got %s, help %q; want %s, help %q", c.reply, got, help, c.want, c.help)
		}
	}
}

func TestActionThreadReplies(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	events := h.s.EventsHandler()
	send := func(n int, row *hitl.SlackMessage, user, text string) {
		t.Helper()
		ev := reply("EvA"+string(rune('0'+n)), user, testChannel, row.TS, text)
		h.post(events, "application/json", ev, time.Now(), testSecret, nil)
	}

	edited := h.askAction("Bash", `{"command":"make deploy"}`, nil)
	_, row := h.waitPosted(edited)
	send(1, row, slackAlice, "edit {\"command\": \"make deploy-staging\"}")
	wantResult(t, h.waitEnded(edited.ID), `{"decision":"edit","args":{"command":"make deploy-staging"}}`, "alice")
	if upd := h.waitUpdated(edited); !strings.Contains(upd.Blocks(), "✏️ Edited and approved by *alice* via slack") {
		t.Errorf("updated message:\n%s", upd.Blocks())
	}

	rejected := h.askAction("Bash", `{"command":"rm -rf build"}`, nil)
	_, row = h.waitPosted(rejected)
	send(2, row, slackAlice, "no: keep the build")
	wantResult(t, h.waitEnded(rejected.ID), `{"decision":"reject","message":"keep the build"}`, "alice")

	strict := h.askAction("Bash", `{"command":"make release"}`, func(r *hitl.CreateRequest) {
		r.Decisions = []hitl.Decision{hitl.DecisionApprove, hitl.DecisionReject}
	})
	_, row = h.waitPosted(strict)
	send(3, row, slackAlice, "hmm, which release?")
	eph := h.fake.WaitFor("chat.postEphemeral", 1, nil)[0]
	if eph.Form.Get("thread_ts") != row.TS || !strings.Contains(eph.Form.Get("text"), "reply `approve` or `reject` and a reason") {
		t.Errorf("a reply that is no answer: ephemeral %v", eph.Form)
	}
	send(4, row, slackAlice, `edit {"command":"make release-candidate"}`)
	eph = h.fake.WaitFor("chat.postEphemeral", 2, nil)[1]
	if !strings.Contains(eph.Form.Get("text"), "That answer was not accepted: edit is not allowed for this action; allowed: approve, reject") {
		t.Errorf("a decision not allowed: ephemeral %v", eph.Form)
	}
	if got := h.get(strict.ID).Status; got != hitl.StatusPending {
		t.Fatalf("after replies that are no answer: %s", got)
	}
	send(5, row, slackBob, "Approve.")
	wantResult(t, h.waitEnded(strict.ID), `{"decision":"approve"}`, "slack:"+slackBob)
}
