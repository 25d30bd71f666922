package email_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/email"
)

func approval(question string, targets *hitl.Targets) hitl.CreateRequest {
	return hitl.CreateRequest{
		Type: hitl.TypeApproval, Question: question, Targets: targets, SourceAgent: "deploy-agent",
		Context: "Build **1432** passed.\n\n<script>alert(1)</script> [docs](javascript:alert(2))",
		Timeout: 600,
	}
}

func TestMailAndLinks(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	in := h.ask(approval("Deploy build 1432?", &hitl.Targets{Users: []string{"alice"}}))

	got := h.box.wait(1)[0]
	if got.user != "hitl" || len(got.to) != 1 || got.to[0] != "alice@example.com" {
		t.Fatalf("mail: authenticated as %q, to %v; want hitl, alice@example.com", got.user, got.to)
	}
	m := parse(t, got)
	if !strings.Contains(m.subject, "Deploy build 1432?") || m.to != "<alice@example.com>" {
		t.Errorf("subject %q to %q", m.subject, m.to)
	}
	for _, want := range []string{"Deploy build 1432?", "deploy-agent", "Answer by:", "Approve:", "Reject:"} {
		if !strings.Contains(m.text, want) {
			t.Errorf("text part lacks %q:\n%s", want, m.text)
		}
	}
	for _, want := range []string{"<strong>1432</strong>", "deploy-agent", ">Approve</a>", ">Reject</a>"} {
		if !strings.Contains(m.html, want) {
			t.Errorf("HTML part lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>", "javascript:"} {
		if strings.Contains(m.html, bad) {
			t.Errorf("HTML part holds %q: the context is not rendered safely", bad)
		}
	}
	links := m.links()
	if len(links) != 2 {
		t.Fatalf("links in the text part: got %d, want 2 (Approve, Reject):\n%s", len(links), m.text)
	}
	for _, l := range links {
		if !strings.Contains(m.html, strings.ReplaceAll(l, "&", "&amp;")) {
			t.Errorf("the HTML part lacks the link %s", l)
		}
	}
	approve, reject := links[0], links[1]

	// A GET (a scanner, a preview, the person) records nothing.
	for _, l := range links {
		for range 2 {
			p := fetch(t, http.MethodGet, l)
			if p.status != http.StatusOK || !strings.Contains(p.body, "Confirm") || !strings.Contains(p.body, "alice") {
				t.Fatalf("GET link: %d\n%s", p.status, p.body)
			}
		}
	}
	if got := h.get(in.ID); got.Status != hitl.StatusPending {
		t.Fatalf("after GETs: status %s, want pending", got.Status)
	}

	// The confirmation's POST answers, as alice, on the channel email.
	p := fetch(t, http.MethodPost, approve)
	if p.status != http.StatusOK || !strings.Contains(p.body, "Recorded: Approve") {
		t.Fatalf("POST approve: %d\n%s", p.status, p.body)
	}
	done := h.get(in.ID)
	if done.Status != hitl.StatusAnswered || string(done.Result.Value) != "true" || done.Result.RespondedBy != "alice" || done.Result.Channel != hitl.ChannelEmail {
		t.Fatalf("after POST: %s %+v; want answered true by alice via email", done.Status, done.Result)
	}

	// A second use is refused, and says who answered.
	p = fetch(t, http.MethodPost, approve)
	if p.status != http.StatusConflict || !strings.Contains(p.body, "already used") || !strings.Contains(p.body, "Approved by alice via email") {
		t.Errorf("second POST: %d\n%s", p.status, p.body)
	}
	// The other link of the mail shows the outcome.
	p = fetch(t, http.MethodGet, reject)
	if p.status != http.StatusConflict || !strings.Contains(p.body, "Approved by alice via email") {
		t.Errorf("GET reject after the answer: %d\n%s", p.status, p.body)
	}
}

// An image in the context is shown as a link to it, as the inbox shows
// it, never loaded: a remote image would tell whoever planted it when the
// mail is read.
func TestContextImagesAreLinks(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	req := approval("Deploy build 1432?", &hitl.Targets{Users: []string{"alice"}})
	req.Context = "Build passed. ![status](http://tracker.example/track.png?u=alice) ![](https://tracker.example/2.gif \"t\") ![x](javascript:alert(1)) [![badge](https://tracker.example/3.png)](https://ci.example/1432)"
	h.ask(req)
	m := parse(t, h.box.wait(1)[0])
	for _, bad := range []string{"<img", "javascript:", "<IMG"} {
		if strings.Contains(m.html, bad) {
			t.Errorf("HTML part holds %q:\n%s", bad, m.html)
		}
	}
	for _, want := range []string{
		`<a href="http://tracker.example/track.png?u=alice">status</a>`,
		`<a href="https://tracker.example/2.gif" title="t">https://tracker.example/2.gif</a>`,
		`<a href="https://ci.example/1432">badge</a>`,
	} {
		if !strings.Contains(m.html, want) {
			t.Errorf("HTML part lacks %s:\n%s", want, m.html)
		}
	}
}

// tamper returns link with part i of its token (v1.id.option.exp.mac)
// replaced.
func tamper(t *testing.T, link string, i int, with string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(u.Query().Get("t"), ".")
	parts[i] = with
	q := url.Values{"t": {strings.Join(parts, ".")}}
	u.RawQuery = q.Encode()
	return u.String()
}

func tokenPart(t *testing.T, link string, i int) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(u.Query().Get("t"), ".")[i]
}

func TestForgedAlteredAndOtherRecipientLinks(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	in := h.ask(approval("Rotate the keys?", &hitl.Targets{Groups: []string{"ops"}}))
	mails := h.box.wait(2)
	byTo := map[string][]string{}
	for _, r := range mails {
		byTo[r.to[0]] = parse(t, r).links()
	}
	alice, bob := byTo["alice@example.com"], byTo["bob@example.com"]
	if len(alice) != 2 || len(bob) != 2 {
		t.Fatalf("mails to the group ops: %v; want alice and bob, two links each (carol has no address)", byTo)
	}
	bad := map[string]string{
		"other recipient": tamper(t, alice[0], 1, tokenPart(t, bob[0], 1)), // alice's link on bob's mail
		"other option":    tamper(t, alice[1], 2, tokenPart(t, alice[0], 2)),
		"later expiry":    tamper(t, alice[0], 3, "99999999999"),
		"forged MAC":      tamper(t, alice[0], 4, strings.Repeat("A", 43)),
		"cut short":       alice[0][:len(alice[0])-5],
		"no token":        h.web.URL + "/email/answer",
		"garbage":         h.web.URL + "/email/answer?t=v1.x.y.z.w",
	}
	for name, l := range bad {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			p := fetch(t, method, l)
			if p.status != http.StatusForbidden || !strings.Contains(p.body, "This link is not valid") {
				t.Errorf("%s, %s: %d\n%s", name, method, p.status, p.body)
			}
		}
	}
	if got := h.get(in.ID); got.Status != hitl.StatusPending {
		t.Fatalf("after bad links: status %s, want pending", got.Status)
	}
	// Bob's own Reject link works, as bob.
	p := fetch(t, http.MethodPost, bob[1])
	if p.status != http.StatusOK {
		t.Fatalf("bob's reject: %d\n%s", p.status, p.body)
	}
	done := h.get(in.ID)
	if string(done.Result.Value) != "false" || done.Result.RespondedBy != "bob" {
		t.Errorf("result %+v; want false by bob", done.Result)
	}
	// Alice's links now say who answered.
	p = fetch(t, http.MethodPost, alice[0])
	if p.status != http.StatusConflict || !strings.Contains(p.body, "Rejected by bob via email") {
		t.Errorf("alice's approve after bob's answer: %d\n%s", p.status, p.body)
	}
}

func TestExpiredLink(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	in := h.ask(approval("Ship it?", &hitl.Targets{Users: []string{"alice"}}))
	links := parse(t, h.box.wait(1)[0]).links()
	h.clock.set(in.Deadline.Add(time.Second))
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		p := fetch(t, method, links[0])
		if p.status != http.StatusGone || !strings.Contains(p.body, "expired") {
			t.Errorf("%s after the deadline: %d\n%s", method, p.status, p.body)
		}
	}
	if got := h.get(in.ID); got.Status != hitl.StatusPending {
		t.Errorf("status %s, want pending (the engine's own timer expires it)", got.Status)
	}
}

func TestWhoIsMailed(t *testing.T) {
	h := newHarness(t, harnessOptions{settings: emailDefaults("ops-list@example.com", "bob@example.com")})
	off := approval("Your one-time code?", &hitl.Targets{Users: []string{"alice"}})
	off.Notify = &hitl.Notify{Email: &hitl.Switch{Off: true}}
	h.ask(off)
	choice := h.ask(hitl.CreateRequest{
		Type: hitl.TypeSingleChoice, Question: "Which region?", Timeout: 600,
		Options: []hitl.Option{{Key: "eu", Label: "Europe"}, {Key: "us", Label: "United States", Description: "us-east-1"}},
	})
	text := h.ask(hitl.CreateRequest{Question: "Why did the build fail?", Targets: &hitl.Targets{Users: []string{"alice", "carol"}}, Timeout: 600})

	// The untargeted choice goes to the default list; the free text to
	// alice (carol has no address); the one kept out of email to no one.
	got := h.box.wait(3)
	byTo := map[string]parsed{}
	for _, r := range got {
		byTo[r.to[0]] = parse(t, r)
	}
	if len(byTo) != 3 || byTo["ops-list@example.com"].subject == "" || byTo["bob@example.com"].subject == "" || byTo["alice@example.com"].subject == "" {
		t.Fatalf("mailed %v; want ops-list, bob (the default list) and alice", keys(byTo))
	}
	if !strings.Contains(byTo["alice@example.com"].subject, "Why did the build fail?") {
		t.Errorf("alice got %q, want the free-text question only", byTo["alice@example.com"].subject)
	}
	if card := byTo["alice@example.com"]; len(card.links()) != 0 || !strings.Contains(card.text, "/?interaction="+text.ID) {
		t.Errorf("free text mail: want a link to the card, no answer links:\n%s", card.text)
	}
	list := byTo["ops-list@example.com"]
	if links := list.links(); len(links) != 2 || !strings.Contains(list.html, "us-east-1") {
		t.Fatalf("choice mail: %d links; want 2 with the options' descriptions:\n%s", len(links), list.text)
	}
	// An address on the default list answers as itself; bob's as bob.
	p := fetch(t, http.MethodGet, list.links()[1])
	if !strings.Contains(p.body, "ops-list@example.com") || !strings.Contains(p.body, "United States") {
		t.Errorf("confirmation page for the default list:\n%s", p.body)
	}
	if p = fetch(t, http.MethodPost, list.links()[1]); p.status != http.StatusOK {
		t.Fatalf("POST: %d\n%s", p.status, p.body)
	}
	if r := h.get(choice.ID).Result; string(r.Value) != `"us"` || r.RespondedBy != "ops-list@example.com" || r.Channel != "email" {
		t.Errorf("result %+v; want us by ops-list@example.com via email", r)
	}
	if p = fetch(t, http.MethodGet, byTo["bob@example.com"].links()[0]); !strings.Contains(p.body, "Answered “United States” by ops-list@example.com via email") {
		t.Errorf("bob's link after the answer:\n%s", p.body)
	}
	if n := len(h.box.all()); n != 3 {
		t.Errorf("mails sent: %d, want 3", n)
	}
}

func TestEndedBeforeDueIsNotMailed(t *testing.T) {
	delay := 3600
	h := newHarness(t, harnessOptions{settings: email.Settings{DelaySeconds: &delay}})
	in := h.ask(approval("Restart the cluster?", &hitl.Targets{Users: []string{"alice"}}))
	ctx := hitl.WithCaller(t.Context(), hitl.Caller{Name: "bob", Channel: hitl.ChannelWeb, Role: hitl.RoleAdmin})
	if _, err := h.b.Respond(ctx, in.ID, json.RawMessage(`"reject"`)); err != nil {
		t.Fatal(err)
	}
	// Move the channel's clock past the delay: the row comes due, and is
	// skipped since the question ended. A second question, due at once,
	// shows the worker has been through the first.
	h.clock.set(time.Now().Add(2 * time.Hour))
	next := approval("Scale up?", &hitl.Targets{Users: []string{"bob"}})
	next.Timeout = 86400
	h.ask(next)
	got := h.box.wait(1)
	if len(h.box.all()) != 1 || got[0].to[0] != "bob@example.com" {
		t.Errorf("mails: %d, first to %v; want only bob's", len(h.box.all()), got[0].to)
	}
}

func keys(m map[string]parsed) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestTestConnectionSendsATestMail(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	admin := hitl.WithCaller(t.Context(), hitl.Caller{Name: "dave", Channel: hitl.ChannelWeb, Role: hitl.RoleAdmin})
	res, err := h.svc.Test(admin, nil, "")
	if err != nil || !res.Success {
		t.Fatalf("Test: %+v, %v", res, err)
	}
	got := h.box.wait(1)[0]
	if m := parse(t, got); got.to[0] != "dave@example.com" || m.subject != "[hitl] Test mail" {
		t.Errorf("test mail to %v, subject %q; want dave@example.com, [hitl] Test mail", got.to, m.subject)
	}
	bob := hitl.WithCaller(t.Context(), hitl.Caller{Name: "bob", Channel: hitl.ChannelWeb, Role: hitl.RoleResponder})
	if _, err := h.svc.Test(bob, nil, ""); hitl.ErrorCode(err) != hitl.EFORBIDDEN {
		t.Errorf("Test as a responder: %v, want forbidden", err)
	}
}

// TestActionMailNamesToolAndKind: a mail about an action says which
// tool, of which kind, and which agent asks.
func TestActionMailNamesToolAndKind(t *testing.T) {
	h := newHarness(t, harnessOptions{settings: emailDefaults("ops-list@example.com")})
	h.ask(hitl.CreateRequest{Type: hitl.TypeAction, SourceAgent: "codex", Timeout: 600,
		Action: &hitl.Action{Name: "exec_command", Args: json.RawMessage(`{"cmd":"make deploy"}`),
			Kind: hitl.KindShell, Input: hitl.ShellInput("make deploy", "/srv/app")}})
	m := parse(t, h.box.wait(1)[0])
	if !strings.Contains(m.text, "Asked by: codex") || !strings.Contains(m.text, "Tool: exec_command (shell command)") {
		t.Errorf("text part lacks the agent and the tool:\n%s", m.text)
	}
	if !strings.Contains(m.html, "<strong>codex</strong> · exec_command (shell command)") {
		t.Errorf("HTML part lacks the agent and the tool:\n%s", m.html)
	}
}

// TestHandoffMailLinksToTheCard: a mail about a handoff says the agent
// handed the conversation over and links to its card to reply.
func TestHandoffMailLinksToTheCard(t *testing.T) {
	h := newHarness(t, harnessOptions{settings: emailDefaults("ops-list@example.com")})
	in := h.ask(hitl.HandoffRequest{Message: "The customer wants a person.", Timeout: 600}.CreateRequest())
	m := parse(t, h.box.wait(1)[0])
	card := "/?interaction=" + in.ID
	if !strings.Contains(m.text, "The agent handed this conversation to a person. Reply in hitl:") || !strings.Contains(m.text, card) {
		t.Errorf("text part lacks the handoff and the card's link:\n%s", m.text)
	}
	if !strings.Contains(m.html, "Reply in hitl") || !strings.Contains(m.html, card) {
		t.Errorf("HTML part lacks the link to reply:\n%s", m.html)
	}
}
