package slack

import (
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
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

// TestEscalationReplySurvivesARestart: a step that fired while the Slack
// channel was not running (it stopped, or its process died, between the
// step and the reply) gets its thread reply once the channel runs again,
// once.
func TestEscalationReplySurvivesARestart(t *testing.T) {
	db := hitltest.SQLiteDB(t)
	fake := slackfake.NewUnstarted(t, nil)
	h := newHarness(t, harnessOptions{config: httpConfig(), db: db, fake: fake})
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval, Timeout: 600, Targets: &hitl.Targets{Users: []string{"alice"}},
		Escalation: []hitl.EscalationStep{{After: "4s", Remind: true}}})
	_, row := h.waitPosted(in)
	isReply := func(c slackfake.Call) bool { return c.Form.Get("thread_ts") == row.TS }

	h.s.Close() // the channel stops; the engine runs on and fires the step
	h.waitEvent(hitl.EventReminded, in.ID)
	h.stop()
	replies := func() int {
		n := 0
		for _, c := range fake.Calls("chat.postMessage") {
			if isReply(c) {
				n++
			}
		}
		return n
	}
	if n := replies(); n != 0 {
		t.Fatalf("%d replies while the channel was stopped, want none (did the step fire before it stopped?)", n)
	}

	h = newHarness(t, harnessOptions{db: db, fake: fake})
	reply := fake.WaitFor("chat.postMessage", 1, isReply)[0]
	if got := reply.Form; !strings.Contains(got.Get("text"), "Reminder") || got.Get("reply_broadcast") != "true" {
		t.Errorf("reply after the restart: %v; want the reminder, broadcast", got)
	}
	if ev := h.waitEvent(hitl.EventNotified, in.ID); !strings.Contains(ev.Detail, "reminder") {
		t.Errorf("notified event %q, want the reminder's", ev.Detail)
	}
	h.stop()
	if n := replies(); n != 1 {
		t.Errorf("%d replies in all, want 1", n)
	}
}
