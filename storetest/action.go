package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// everyActionField returns an action interaction with every action field
// set.
func everyActionField() *hitl.Interaction {
	in := minimal()
	in.ID = "0190a5c0-7d2e-7cc1-9b1e-4d6f4e8a1b2d"
	in.Type = hitl.TypeAction
	in.Question = "Run Bash?"
	in.SourceAgent = "claude-code"
	in.Action = &hitl.Action{Name: "Bash", Args: raw(`{"command":"terraform apply -auto-approve","timeout":600}`), Description: "Apply the plan — «ünïcödé»"}
	in.ArgsSchema = raw(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)
	in.Decisions = []hitl.Decision{hitl.DecisionApprove, hitl.DecisionReject}
	in.RejectRequiresMessage = true
	in.DefaultResponse = raw(`{"decision":"reject","message":"nobody answered"}`)
	in.Options = []hitl.Option{}
	return in
}

func testCreateRoundTripAction(t *testing.T, s hitl.Store) {
	t.Run("EveryField", func(t *testing.T) { checkCreate(t, s, everyActionField) })
	t.Run("Defaults", func(t *testing.T) {
		checkCreate(t, s, func() *hitl.Interaction {
			return ask(t, hitl.CreateRequest{Type: hitl.TypeAction, Action: &hitl.Action{Name: "Read"}}, "agent", base)
		})
	})
}

// actionAnswer is an edit of everyActionField's command, by alice.
func actionAnswer() hitl.Transition {
	tr := answer(`{"decision":"edit","args":{"command":"terraform plan","timeout":600}}`, at(10))
	tr.ArgsDiff = []byte(`[{"op":"replace","path":"/command","value":"terraform plan"}]`)
	tr.Detail = string(tr.ArgsDiff)
	return tr
}

// testResolveAction checks that an action's answer keeps its args_diff
// and rule_id, and that the event carries the transition's detail.
func testResolveAction(t *testing.T, s hitl.Store) {
	ruled := answer(`{"decision":"approve"}`, at(1))
	ruled.By, ruled.Via, ruled.RuleID = "rule:r1", hitl.ChannelRule, "r1"
	for name, tr := range map[string]hitl.Transition{"Edit": actionAnswer(), "ByRule": ruled} {
		for _, from := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "", true: "From"}[from], func(t *testing.T) {
				in := everyActionField()
				in.ID = ""
				in = create(t, s, in)
				if from {
					tr.From = in
				}
				out, ev, err := s.Resolve(t.Context(), in.ID, tr)
				if err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				want := resolved(in, tr)
				returnedAndStored(t, s, "Resolve", want, out)
				if ev.Detail != tr.Detail || ev.Next != nil {
					t.Errorf("event: got detail %q and next %v, want %q and none", ev.Detail, ev.Next, tr.Detail)
				}
				evs, err := s.Events(t.Context(), ev.Seq-1, 10)
				if err != nil {
					t.Fatal(err)
				}
				if len(evs) != 1 || evs[0].Detail != tr.Detail || evs[0].Interaction.Result.RuleID != tr.RuleID {
					t.Errorf("event log: got %+v", evs)
				}
			})
		}
	}
}

// testResolveWithRule checks that an answer that makes a rule inserts it
// in the same transaction, with its rule_created event after the answered
// one; and that an answer that loses inserts no rule.
func testResolveWithRule(t *testing.T, s hitl.Store) {
	for _, from := range []bool{false, true} {
		t.Run(map[bool]string{false: "Read", true: "From"}[from], func(t *testing.T) {
			in := everyActionField()
			in.ID = ""
			in = create(t, s, in)
			r := rule("", hitl.RuleAllow, "claude-code", "Bash", at(10))
			r.CreatedBy, r.InteractionID = "alice", in.ID
			tr := answer(`{"decision":"approve"}`, at(10))
			tr.Rule = r
			if from {
				tr.From = in
			}
			out, ev, err := s.Resolve(t.Context(), in.ID, tr)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if ev.Next == nil {
				t.Fatal("Resolve: no rule_created event after the answer")
			}
			rc := ev.Next
			if rc.Type != hitl.EventRuleCreated || rc.InteractionID != in.ID || rc.Seq <= ev.Seq || rc.Actor != "alice" || rc.Channel != hitl.ChannelWeb || rc.Detail == "" {
				t.Errorf("rule_created event: got %+v", rc)
			}
			if d := cmp.Diff(out, rc.Interaction); d != "" {
				t.Errorf("rule_created event's interaction (-answered +got):\n%s", d)
			}
			stored := getRule(t, s, rc.Detail)
			if stored.InteractionID != in.ID || stored.CreatedBy != "alice" || stored.SourceAgent != "claude-code" {
				t.Errorf("rule: got %+v", stored)
			}
			evs := events(t, s)
			last := evs[len(evs)-2:]
			if last[0].Type != hitl.EventAnswered || last[1].Type != hitl.EventRuleCreated || last[1].Seq != rc.Seq || last[1].Interaction == nil {
				t.Errorf("event log ends with %+v, %+v; want answered then rule_created with the interaction", last[0], last[1])
			}

			// A second answer with a rule loses: no rule is made.
			seq := lastSeq(t, s)
			again := tr
			again.Rule = rule("lost", hitl.RuleDeny, "claude-code", "Bash", base)
			if _, _, err := s.Resolve(t.Context(), in.ID, again); err == nil {
				t.Fatal("second Resolve: no error")
			}
			if _, err := s.Rule(t.Context(), "lost"); hitl.ErrorCode(err) != hitl.ENOTFOUND {
				t.Errorf("the losing answer's rule: got %v, want not found", err)
			}
			if got := lastSeq(t, s); got != seq {
				t.Errorf("LastEventSeq after the losing answer: got %d, want %d", got, seq)
			}
		})
	}
}

// testCreateAnswered checks that an interaction created answered (a rule's
// answer) is stored answered, with its answered event after the created
// one, and that an idempotent repeat writes nothing.
func testCreateAnswered(t *testing.T, s hitl.Store) {
	build := func() *hitl.Interaction {
		in := everyActionField()
		in.IdempotencyKey = "toolu_01"
		in.Status = hitl.StatusAnswered
		in.Result = &hitl.Result{Value: raw(`{"decision":"approve"}`), RespondedBy: "rule:r1", Channel: hitl.ChannelRule,
			RespondedAt: base.Add(123_456), RuleID: "r1"}
		return in
	}
	got, ev, existed, err := s.CreateInteraction(t.Context(), build())
	if err != nil || existed {
		t.Fatalf("CreateInteraction: existed %v, %v", existed, err)
	}
	want := build()
	want.Result.RespondedAt = base
	returnedAndStored(t, s, "CreateInteraction", want, got)
	if ev.Type != hitl.EventCreated || ev.Next == nil {
		t.Fatalf("events: %+v, want created with an answered event next", ev)
	}
	wantAnswered := &hitl.Event{Seq: ev.Next.Seq, Type: hitl.EventAnswered, InteractionID: want.ID, At: base,
		Actor: "rule:r1", Channel: hitl.ChannelRule, Interaction: want}
	if d := cmp.Diff(wantAnswered, ev.Next); d != "" {
		t.Errorf("answered event (-want +got):\n%s", d)
	}
	if ev.Next.Seq <= ev.Seq {
		t.Errorf("answered event Seq %d, want after the created event's %d", ev.Next.Seq, ev.Seq)
	}
	evs := events(t, s)
	if len(evs) != 2 || evs[0].Seq != ev.Seq || evs[0].Interaction.Status != hitl.StatusAnswered {
		t.Fatalf("event log: %+v", evs)
	}
	wantAnswered.Next = nil
	if d := cmp.Diff(wantAnswered, evs[1]); d != "" {
		t.Errorf("event log's answered event (-want +got):\n%s", d)
	}
	// A repeat with the same key returns it, writing nothing.
	again, ev2, existed, err := s.CreateInteraction(t.Context(), build())
	if err != nil || !existed || ev2 != nil || again.ID != want.ID {
		t.Errorf("repeat: %v %v %v %v", again, ev2, existed, err)
	}
	if got := lastSeq(t, s); got != ev.Next.Seq {
		t.Errorf("LastEventSeq after the repeat: %d, want %d", got, ev.Next.Seq)
	}
	// Other statuses are created pending.
	in := everyActionField()
	in.ID, in.Status, in.Result = "", hitl.StatusExpired, &hitl.Result{Reason: "timeout"}
	if got := create(t, s, in); got.Status != hitl.StatusPending || got.Result != nil {
		t.Errorf("created expired: %s %+v, want pending", got.Status, got.Result)
	}
}
