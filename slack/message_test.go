package slack

import (
	"context"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/slackfake"
)

// TestTextIsEscaped checks the text of the messages, which Slack shows in
// notifications and reads markup in like the blocks: a question cannot
// alert the channel, mention someone or disguise a link there either.
func TestTextIsEscaped(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	const question = "<!channel> Deploy? See <https://evil.example|the runbook> & ask <@U0BOSS>"
	const want = "&lt;!channel&gt; Deploy? See &lt;https://evil.example|the runbook&gt; &amp; ask &lt;@U0BOSS&gt;"
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval, Question: question})
	post, _ := h.waitPosted(in)
	if got := post.Form.Get("text"); got != "Approval needed: "+want {
		t.Errorf("posted text %q, want %q", got, "Approval needed: "+want)
	}
	agent := hitl.WithCaller(context.Background(), hitl.Caller{Name: "agent", Channel: hitl.ChannelAPI, Role: hitl.RoleAgent})
	if _, err := h.b.Cancel(agent, in.ID, ""); err != nil {
		t.Fatal(err)
	}
	upd := h.waitUpdated(in)
	if got := upd.Form.Get("text"); got != "Approval needed: "+want+" — cancelled" {
		t.Errorf("updated text %q, want %q", got, "Approval needed: "+want+" — cancelled")
	}
	for _, c := range []slackfake.Call{post, upd} {
		if strings.Contains(c.Form.Get("text"), "<") || strings.Contains(c.Blocks(), "<!channel>") {
			t.Errorf("%s: markup from the question got through: text %q, blocks %s", c.Method, c.Form.Get("text"), c.Blocks())
		}
	}
}
