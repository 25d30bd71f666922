package slack

import (
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/slackfake"
)

// TestEscalationRepliesInTheThread: a posted question's reminder and
// escalation are thread replies, also sent to the channel; a step that
// leaves Slack out posts nothing.
func TestEscalationRepliesInTheThread(t *testing.T) {
	h := newHarness(t, harnessOptions{config: httpConfig()})
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval, Timeout: 600, Targets: &hitl.Targets{Users: []string{"alice"}},
		Escalation: []hitl.EscalationStep{
			{After: "1s", Remind: true, Channels: []string{hitl.ChannelEmail}},
			{After: "2s", Remind: true},
			{After: "3s", AddTargets: &hitl.Targets{Groups: []string{"sre-leads"}}, Channels: []string{hitl.ChannelSlack}},
		}})
	_, row := h.waitPosted(in)
	isReply := func(c slackfake.Call) bool { return c.Form.Get("thread_ts") == row.TS }
	replies := h.fake.WaitFor("chat.postMessage", 2, isReply)
	if got := replies[0].Form; !strings.Contains(got.Get("text"), "Reminder") || got.Get("reply_broadcast") != "true" || got.Get("channel") != row.ChannelID {
		t.Errorf("reminder: %v; want a broadcast reply in the thread", got)
	}
	if got := replies[1].Form.Get("text"); !strings.Contains(got, "Escalated to @sre-leads") {
		t.Errorf("escalation reply: %q, want it to name @sre-leads", got)
	}
	h.waitEvent(hitl.EventEscalated, in.ID)
	if n := len(h.fake.Calls("chat.postMessage")); n != 3 {
		t.Errorf("chat.postMessage called %d times, want 3 (the question and two replies; the email-only step posts none)", n)
	}
}
