package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// rule returns a rule made by "root" at created, with no match.
func rule(id string, effect hitl.RuleEffect, agent, action string, created time.Time) *hitl.Rule {
	return &hitl.Rule{ID: id, Effect: effect, SourceAgent: agent, ActionName: action, CreatedBy: "root", CreatedAt: created}
}

// everyRuleField returns a rule with every field a new rule has set.
func everyRuleField() *hitl.Rule {
	exp := at(3600)
	return &hitl.Rule{
		ID:          "0190a5c0-7d2e-7cc1-9b1e-4d6f4e8a1b2e",
		Effect:      hitl.RuleDeny,
		SourceAgent: "claude-code",
		AskedBy:     "ci-token",
		ActionName:  "Bash",
		Match:       &hitl.RuleMatch{Arg: "command", Prefix: "git push"},
		Message:     "no pushing — «ünïcödé»",
		CreatedBy:   "root",
		CreatedAt:   base,
		ExpiresAt:   &exp,
		Within:      &hitl.Audience{User: "alice", Groups: []string{"ops", "sre"}},
	}
}

// kindRule returns a rule on a kind, with every field it may have set.
func kindRule() *hitl.Rule {
	r := everyRuleField()
	r.ID, r.ActionName, r.Kind = "0190a5c0-7d2e-7cc1-9b1e-4d6f4e8a1b2f", "", hitl.KindShell
	return r
}

// createRule stores r, which must be new, and returns it as stored.
func createRule(t *testing.T, s hitl.Store, r *hitl.Rule) *hitl.Rule {
	t.Helper()
	got, ev, err := s.CreateRule(t.Context(), r, hitl.ChannelAPI)
	if err != nil {
		t.Fatalf("CreateRule: %v", err)
	}
	if ev == nil || ev.Type != hitl.EventRuleCreated || ev.Detail != got.ID {
		t.Fatalf("CreateRule: got event %+v, want rule_created naming %s", ev, got.ID)
	}
	return got
}

// getRule returns the stored rule with id.
func getRule(t *testing.T, s hitl.Store, id string) *hitl.Rule {
	t.Helper()
	r, err := s.Rule(t.Context(), id)
	if err != nil {
		t.Fatalf("Rule(%s): %v", id, err)
	}
	return r
}

func testRuleRoundTrip(t *testing.T, s hitl.Store) {
	in := create(t, s, askAt(t, base, 60))
	for name, build := range map[string]func() *hitl.Rule{
		"EveryField": everyRuleField,
		"Kind":       kindRule,
		"Glob": func() *hitl.Rule {
			r := rule("glob", hitl.RuleAllow, "*", "Write", base)
			r.Match = &hitl.RuleMatch{Arg: "file_path", Glob: "src/**"}
			return r
		},
		"Equals": func() *hitl.Rule {
			r := rule("equals", hitl.RuleAllow, "mailer", "send_email", base)
			r.Match = &hitl.RuleMatch{Arg: "to", Equals: raw(`{"a":[1,"x"]}`)}
			return r
		},
		"EqualsNull": func() *hitl.Rule {
			r := rule("equals-null", hitl.RuleAllow, "mailer", "send_email", base)
			r.Match = &hitl.RuleMatch{Arg: "cc", Equals: raw(`null`)}
			return r
		},
		"FromAnAnswer": func() *hitl.Rule {
			r := rule("from-answer", hitl.RuleAllow, "a", "Bash", base)
			r.InteractionID = in.ID
			return r
		},
	} {
		t.Run(name, func(t *testing.T) {
			before := lastSeq(t, s)
			got, ev, err := s.CreateRule(t.Context(), build(), hitl.ChannelWeb)
			if err != nil {
				t.Fatalf("CreateRule: %v", err)
			}
			want := build()
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("CreateRule returned (-want +got):\n%s", d)
			}
			if d := cmp.Diff(want, getRule(t, s, want.ID)); d != "" {
				t.Errorf("Rule (-want +got):\n%s", d)
			}
			wantEv := &hitl.Event{Seq: ev.Seq, Type: hitl.EventRuleCreated, InteractionID: want.InteractionID, At: want.CreatedAt,
				Actor: "root", Channel: hitl.ChannelWeb, Detail: want.ID}
			if want.InteractionID != "" {
				wantEv.Interaction = in
			}
			if d := cmp.Diff(wantEv, ev); d != "" {
				t.Errorf("rule_created event (-want +got):\n%s", d)
			}
			if ev.Seq <= before {
				t.Errorf("event Seq %d, want > %d", ev.Seq, before)
			}
			evs, err := s.Events(t.Context(), ev.Seq-1, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) == 0 || evs[0].Seq != ev.Seq {
				t.Fatalf("Events after %d: got %+v, want the rule_created event first", ev.Seq-1, evs)
			}
			if d := cmp.Diff(wantEv, evs[0]); d != "" {
				t.Errorf("event log (-want +got):\n%s", d)
			}
		})
	}
}

func testRuleDefaults(t *testing.T, s hitl.Store) {
	r := rule("", hitl.RuleAllow, "a", "Bash", time.Time{})
	got := createRule(t, s, r)
	if got.ID == "" || got.CreatedAt.IsZero() {
		t.Errorf("got ID %q and created_at %v, want both set", got.ID, got.CreatedAt)
	}
	if d := cmp.Diff(got, getRule(t, s, got.ID)); d != "" {
		t.Errorf("Rule (-create +get):\n%s", d)
	}
	again := rule(got.ID, hitl.RuleDeny, "b", "Write", base)
	seq := lastSeq(t, s)
	if _, _, err := s.CreateRule(t.Context(), again, hitl.ChannelAPI); hitl.ErrorCode(err) != hitl.ECONFLICT {
		t.Errorf("CreateRule with an existing ID: got %v, want a conflict", err)
	}
	if got := lastSeq(t, s); got != seq {
		t.Errorf("LastEventSeq after the failed create: got %d, want %d", got, seq)
	}
	// Sub-millisecond times are kept to the millisecond, as read back.
	fine := rule("fine", hitl.RuleAllow, "a", "Bash", base.Add(123_456))
	exp := at(60).Add(999_999)
	fine.ExpiresAt = &exp
	got = createRule(t, s, fine)
	if d := cmp.Diff(got, getRule(t, s, "fine")); d != "" {
		t.Errorf("Rule (-create +get):\n%s", d)
	}
}

func testRuleNotFound(t *testing.T, s hitl.Store) {
	if _, err := s.Rule(t.Context(), "nope"); hitl.ErrorCode(err) != hitl.ENOTFOUND {
		t.Errorf("Rule: got %v, want not found", err)
	}
	if _, _, err := s.RevokeRule(t.Context(), "nope", "root", hitl.ChannelAPI, base); hitl.ErrorCode(err) != hitl.ENOTFOUND {
		t.Errorf("RevokeRule: got %v, want not found", err)
	}
}

func testRuleRevoke(t *testing.T, s hitl.Store) {
	r := createRule(t, s, everyRuleField())
	got, ev, err := s.RevokeRule(t.Context(), r.ID, "alice", hitl.ChannelWeb, at(5))
	if err != nil {
		t.Fatalf("RevokeRule: %v", err)
	}
	want := *r
	when := at(5)
	want.RevokedAt, want.RevokedBy = &when, "alice"
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("RevokeRule returned (-want +got):\n%s", d)
	}
	if d := cmp.Diff(&want, getRule(t, s, r.ID)); d != "" {
		t.Errorf("Rule after RevokeRule (-want +got):\n%s", d)
	}
	wantEv := &hitl.Event{Seq: ev.Seq, Type: hitl.EventRuleRevoked, At: when, Actor: "alice", Channel: hitl.ChannelWeb, Detail: r.ID}
	if d := cmp.Diff(wantEv, ev); d != "" {
		t.Errorf("rule_revoked event (-want +got):\n%s", d)
	}
	if evs := events(t, s); len(evs) != 2 || evs[1].Seq != ev.Seq {
		t.Errorf("event log: got %d events, want rule_created and rule_revoked", len(evs))
	}
	// Revoking again changes nothing and appends nothing.
	again, ev2, err := s.RevokeRule(t.Context(), r.ID, "bob", hitl.ChannelAPI, at(6))
	if err != nil || ev2 != nil {
		t.Fatalf("RevokeRule again: got event %v, error %v; want neither", ev2, err)
	}
	if d := cmp.Diff(&want, again); d != "" {
		t.Errorf("RevokeRule again returned (-want +got):\n%s", d)
	}
	if got := lastSeq(t, s); got != ev.Seq {
		t.Errorf("LastEventSeq: got %d, want %d", got, ev.Seq)
	}
	if rules := activeRules(t, s, "claude-code", "Bash", at(1)); len(rules) != 0 {
		t.Errorf("ActiveRules: got the revoked rule")
	}
}

// activeRules returns the IDs of ActiveRules(agent, action, "", now).
func activeRules(t *testing.T, s hitl.Store, agent, action string, now time.Time) []string {
	t.Helper()
	return activeKindRules(t, s, agent, action, "", now)
}

// activeKindRules returns the IDs of ActiveRules(agent, action, kind, now).
func activeKindRules(t *testing.T, s hitl.Store, agent, action, kind string, now time.Time) []string {
	t.Helper()
	rules, err := s.ActiveRules(t.Context(), agent, action, kind, now)
	if err != nil {
		t.Fatalf("ActiveRules: %v", err)
	}
	return ruleIDs(rules)
}

func ruleIDs(rules []*hitl.Rule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.ID
	}
	return out
}

func testActiveRules(t *testing.T, s hitl.Store) {
	exp := at(100)
	mk := func(id, agent, action string, created int, mod func(*hitl.Rule)) {
		r := rule(id, hitl.RuleAllow, agent, action, at(created))
		if mod != nil {
			mod(r)
		}
		createRule(t, s, r)
	}
	mk("c-newest", "claude-code", "Bash", 30, nil)
	mk("a-oldest", "claude-code", "Bash", 10, nil)
	mk("b-any", "*", "Bash", 20, func(r *hitl.Rule) { r.Effect = hitl.RuleDeny })
	mk("b-same-time", "claude-code", "Bash", 20, nil)
	mk("expiring", "claude-code", "Bash", 5, func(r *hitl.Rule) { r.ExpiresAt = &exp })
	mk("other-agent", "cursor", "Bash", 1, nil)
	mk("other-action", "claude-code", "Write", 1, nil)
	mk("case", "claude-code", "bash", 1, nil)
	mk("revoked", "claude-code", "Bash", 1, nil)
	if _, _, err := s.RevokeRule(t.Context(), "revoked", "root", hitl.ChannelAPI, at(2)); err != nil {
		t.Fatal(err)
	}

	want := []string{"expiring", "a-oldest", "b-any", "b-same-time", "c-newest"}
	if d := cmp.Diff(want, activeRules(t, s, "claude-code", "Bash", at(50))); d != "" {
		t.Errorf("ActiveRules before the expiry (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want[1:], activeRules(t, s, "claude-code", "Bash", exp)); d != "" {
		t.Errorf("ActiveRules at the expiry (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"b-any"}, activeRules(t, s, "someone-else", "Bash", at(50))); d != "" {
		t.Errorf("ActiveRules of another agent (-want +got):\n%s", d)
	}
	if got := activeRules(t, s, "claude-code", "Read", at(50)); len(got) != 0 {
		t.Errorf("ActiveRules of an action without rules: got %v", got)
	}
	// A rule whose source_agent is "*" applies to all; an agent named
	// "*" finds only those.
	if d := cmp.Diff([]string{"b-any"}, activeRules(t, s, hitl.AnyAgent, "Bash", at(50))); d != "" {
		t.Errorf("ActiveRules of agent * (-want +got):\n%s", d)
	}

	// Rules on a kind come with those on the name, in one order; a kind
	// of "" finds none of them.
	onKind := func(id, agent, kind string, created int) {
		r := rule(id, hitl.RuleAllow, agent, "", at(created))
		r.Kind = kind
		createRule(t, s, r)
	}
	onKind("k-shell", "*", hitl.KindShell, 15)
	onKind("k-shell-codex", "codex", hitl.KindShell, 16)
	onKind("k-write", "*", hitl.KindFileWrite, 17)
	want = []string{"expiring", "a-oldest", "k-shell", "b-any", "b-same-time", "c-newest"}
	if d := cmp.Diff(want, activeKindRules(t, s, "claude-code", "Bash", hitl.KindShell, at(50))); d != "" {
		t.Errorf("ActiveRules with kind shell (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"k-shell", "k-shell-codex"}, activeKindRules(t, s, "codex", "exec_command", hitl.KindShell, at(50))); d != "" {
		t.Errorf("ActiveRules of codex's shell (-want +got):\n%s", d)
	}
	if got := activeKindRules(t, s, "codex", "", "", at(50)); len(got) != 0 {
		t.Errorf("ActiveRules without a name or kind: got %v", got)
	}
}

func testRulesList(t *testing.T, s hitl.Store) {
	exp := at(100)
	for i := range 7 {
		r := rule(fmt.Sprintf("r%d", i), hitl.RuleAllow, []string{"a", "b"}[i%2], []string{"Bash", "Write", "Read"}[i%3], at(i))
		r.CreatedBy = []string{"alice", "bob"}[i/4]
		if i == 6 {
			r.ExpiresAt = &exp
		}
		createRule(t, s, r)
	}
	if _, _, err := s.RevokeRule(t.Context(), "r0", "root", hitl.ChannelAPI, at(10)); err != nil {
		t.Fatal(err)
	}
	list := func(f hitl.RuleFilter) []string {
		t.Helper()
		rules, next, err := s.Rules(t.Context(), f)
		if err != nil {
			t.Fatalf("Rules(%+v): %v", f, err)
		}
		if next != "" {
			t.Fatalf("Rules(%+v): got a next page", f)
		}
		return ruleIDs(rules)
	}
	for name, tt := range map[string]struct {
		f    hitl.RuleFilter
		want []string
	}{
		"All":         {hitl.RuleFilter{}, []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6"}},
		"Active":      {hitl.RuleFilter{ActiveAt: at(50)}, []string{"r1", "r2", "r3", "r4", "r5", "r6"}},
		"ActiveLater": {hitl.RuleFilter{ActiveAt: exp}, []string{"r1", "r2", "r3", "r4", "r5"}},
		"CreatedBy":   {hitl.RuleFilter{CreatedBy: "bob"}, []string{"r4", "r5", "r6"}},
		"Agent":       {hitl.RuleFilter{SourceAgent: "a"}, []string{"r0", "r2", "r4", "r6"}},
		"Action":      {hitl.RuleFilter{ActionName: "Bash"}, []string{"r0", "r3", "r6"}},
		"Combined":    {hitl.RuleFilter{ActionName: "Bash", SourceAgent: "a", ActiveAt: at(50), CreatedBy: "bob"}, []string{"r6"}},
		"Nobody":      {hitl.RuleFilter{CreatedBy: "carol"}, []string{}},
	} {
		if d := cmp.Diff(tt.want, list(tt.f)); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}

	// Pages of 3, oldest first, with a rule added between pages.
	var all []string
	f := hitl.RuleFilter{Limit: 3}
	for pages := 0; ; pages++ {
		rules, next, err := s.Rules(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ruleIDs(rules)...)
		if pages == 0 {
			createRule(t, s, rule("r7", hitl.RuleAllow, "a", "Bash", at(20)))
		}
		if next == "" {
			break
		}
		if pages > 5 {
			t.Fatal("too many pages")
		}
		f.Cursor = next
	}
	if d := cmp.Diff([]string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"}, all); d != "" {
		t.Errorf("paged (-want +got):\n%s", d)
	}
	if _, _, err := s.Rules(t.Context(), hitl.RuleFilter{Cursor: "not-a-cursor"}); hitl.ErrorCode(err) != hitl.EINVALID {
		t.Errorf("bad cursor: got %v, want invalid", err)
	}
}

// testPurgeWithRuleEvents: a purge goes by when the newest event belongs
// to no interaction (a rule's), deletes an ended interaction with the
// rule_created event its answer appended, and keeps the rule itself and
// the events of no interaction.
func testPurgeWithRuleEvents(t *testing.T, s hitl.Store) {
	in := everyActionField()
	in.ID = ""
	in = create(t, s, in)
	tr := answer(`{"decision":"approve"}`, at(10))
	tr.Rule = rule("from-answer", hitl.RuleAllow, "claude-code", "Bash", at(10))
	tr.Rule.CreatedBy = "alice"
	resolve(t, s, in.ID, tr)
	api := createRule(t, s, rule("by-api", hitl.RuleDeny, "*", "Write", at(11)))
	_, revoked, err := s.RevokeRule(t.Context(), api.ID, "root", hitl.ChannelAPI, at(12))
	if err != nil {
		t.Fatal(err)
	}
	got := purge(t, s, hitl.Purge{EndedBefore: at(1000)})
	if d := cmp.Diff([]string{in.ID}, got.IDs); d != "" {
		t.Errorf("PurgeEnded (-want +got):\n%s", d)
	}
	if seq := lastSeq(t, s); seq != revoked.Seq {
		t.Errorf("LastEventSeq: got %d, want %d", seq, revoked.Seq)
	}
	evs := events(t, s)
	if len(evs) != 2 || evs[0].Type != hitl.EventRuleCreated || evs[0].InteractionID != "" || evs[1].Seq != revoked.Seq {
		t.Errorf("events after the purge: %+v, want the API rule's two", evs)
	}
	if r := getRule(t, s, "from-answer"); r.InteractionID != in.ID {
		t.Errorf("the answer's rule after its interaction was purged: %+v", r)
	}
}

// testRulesVersion checks that the rules' version changes with every
// change to the rules, and with nothing else.
func testRulesVersion(t *testing.T, s hitl.Store) {
	version := func() int64 {
		t.Helper()
		v, err := s.RulesVersion(t.Context())
		if err != nil {
			t.Fatalf("RulesVersion: %v", err)
		}
		return v
	}
	v0 := version()
	r := createRule(t, s, rule("versioned", hitl.RuleAllow, "claude-code", "Bash", at(1)))
	v1 := version()
	if v1 == v0 {
		t.Fatal("RulesVersion did not change when a rule was made")
	}
	if _, err := s.ActiveRules(t.Context(), "claude-code", "Bash", "", at(2)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Rules(t.Context(), hitl.RuleFilter{}); err != nil {
		t.Fatal(err)
	}
	create(t, s, minimal())
	if v := version(); v != v1 {
		t.Fatalf("RulesVersion changed from %d to %d without a change to the rules", v1, v)
	}
	if _, _, err := s.RevokeRule(t.Context(), r.ID, "alice", hitl.ChannelWeb, at(3)); err != nil {
		t.Fatal(err)
	}
	if v := version(); v == v1 {
		t.Fatal("RulesVersion did not change when a rule was revoked")
	}
}

// testCreateAtRulesVersion checks CreateInteractionAtRulesVersion: a
// create at the rules' version writes as CreateInteraction does; at any
// other it writes nothing, and does not look up an idempotency key either.
func testCreateAtRulesVersion(t *testing.T, s hitl.Store) {
	v0, err := s.RulesVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	in := minimal()
	in.IdempotencyKey = "checked-create"
	got, ev, existed, err := s.CreateInteractionAtRulesVersion(t.Context(), in, v0)
	if err != nil || existed || ev == nil || ev.Type != hitl.EventCreated {
		t.Fatalf("create at the current version: existed %v, event %+v, %v", existed, ev, err)
	}
	if get(t, s, got.ID).Status != hitl.StatusPending {
		t.Fatal("the interaction created at the current version is not stored pending")
	}

	createRule(t, s, rule("changes-the-version", hitl.RuleAllow, "claude-code", "Bash", at(1)))
	seq, err := s.LastEventSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	taken := minimal()
	taken.ID = got.ID
	for _, in := range []*hitl.Interaction{minimal(), in, taken} { // a new one, the key already used, the id already taken
		_, ev, existed, err := s.CreateInteractionAtRulesVersion(t.Context(), in, v0)
		if !errors.Is(err, hitl.ErrRulesChanged) || ev != nil || existed {
			t.Errorf("create at the version before a rule was made: existed %v, event %+v, %v; want ErrRulesChanged", existed, ev, err)
		}
	}
	if after, err := s.LastEventSeq(t.Context()); err != nil || after != seq {
		t.Errorf("the event log went from %d to %d (%v) on creates refused for the rules' version", seq, after, err)
	}
	if list, _, err := s.ListInteractions(t.Context(), hitl.ListFilter{}); err != nil || len(list) != 1 {
		t.Errorf("interactions after the refused creates: %d (%v), want the first one only", len(list), err)
	}

	// At the version now: the key already used finds its interaction,
	// and an action a rule answers is created answered, with both events.
	v1, err := s.RulesVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	again, ev, existed, err := s.CreateInteractionAtRulesVersion(t.Context(), in, v1)
	if err != nil || !existed || ev != nil || again.ID != got.ID {
		t.Errorf("the key used, at the current version: %+v, existed %v, event %+v, %v; want interaction %s, existed", again, existed, ev, err, got.ID)
	}
	action := everyActionField()
	action.Status = hitl.StatusAnswered
	action.Result = &hitl.Result{Value: raw(`{"decision":"approve"}`), RespondedBy: "rule:r1", Channel: hitl.ChannelRule, RespondedAt: base, RuleID: "r1"}
	answered, ev, existed, err := s.CreateInteractionAtRulesVersion(t.Context(), action, v1)
	if err != nil || existed || ev == nil || ev.Next == nil || ev.Next.Type != hitl.EventAnswered || ev.Next.Seq <= ev.Seq {
		t.Fatalf("an action a rule answers, at the current version: existed %v, event %+v, %v; want created, then answered", existed, ev, err)
	}
	if stored := get(t, s, answered.ID); stored.Status != hitl.StatusAnswered || stored.Result.RuleID != "r1" {
		t.Errorf("the action a rule answers is stored %s %+v", stored.Status, stored.Result)
	}
	if last, err := s.LastEventSeq(t.Context()); err != nil || last != ev.Next.Seq {
		t.Errorf("the event log ends at %d (%v), want the answered event %d", last, err, ev.Next.Seq)
	}
}
