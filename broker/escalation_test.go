package broker_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
)

// firedSteps records the events an OnEscalation handler is given.
type firedSteps struct {
	mu  sync.Mutex
	evs []*hitl.Event
}

func (f *firedSteps) handle(_ context.Context, ev *hitl.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.evs = append(f.evs, ev)
}

func (f *firedSteps) list() []*hitl.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.evs)
}

func escalating(steps ...hitl.EscalationStep) hitl.CreateRequest {
	return hitl.CreateRequest{Question: "Deploy?", Type: hitl.TypeApproval, Timeout: 7 * 24 * 3600,
		Targets: &hitl.Targets{Users: []string{"alice"}}, Escalation: steps}
}

func TestEscalationStepsFireOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, nil)
		var fired firedSteps
		b.OnEscalation(fired.handle)
		in := mustCreate(t, b, escalating(
			hitl.EscalationStep{After: "10m", Remind: true},
			hitl.EscalationStep{After: "30m", AddTargets: &hitl.Targets{Groups: []string{"sre-leads"}}, Channels: []string{"slack", "email"}},
		))
		time.Sleep(10*time.Minute - time.Second)
		synctest.Wait()
		if got := fired.list(); len(got) != 0 {
			t.Fatalf("before 10m: %d steps fired, want none", len(got))
		}
		time.Sleep(time.Second)
		synctest.Wait()
		got := fired.list()
		if len(got) != 1 || got[0].Type != hitl.EventReminded || !got[0].At.Equal(in.CreatedAt.Add(10*time.Minute)) {
			t.Fatalf("at 10m: got %v, want one reminded event at 10m", eventTypes(got))
		}
		time.Sleep(20 * time.Minute)
		synctest.Wait()
		got = fired.list()
		if len(got) != 2 || got[1].Type != hitl.EventEscalated {
			t.Fatalf("at 30m: got %v, want reminded, escalated", eventTypes(got))
		}
		d, err := hitl.ParseEscalationDetail(got[1])
		if err != nil || d.Step != 1 || d.Added.Groups[0] != "sre-leads" || !slices.Equal(d.Channels, []string{"slack", "email"}) {
			t.Errorf("escalated detail: got %+v, %v", d, err)
		}
		now, err := b.Get(context.Background(), in.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(now.Targets.Groups, []string{"sre-leads"}) || !slices.Equal(now.EscalatedSteps, []int{0, 1}) {
			t.Errorf("after the steps: targets %+v, fired %v; want sre-leads added, steps 0 and 1", now.Targets, now.EscalatedSteps)
		}
		sreLead := hitl.WithCaller(context.Background(), hitl.Caller{Name: "carol", Role: hitl.RoleResponder, Groups: []string{"sre-leads"}})
		if _, err := b.Get(sreLead, in.ID); err != nil {
			t.Errorf("an sre lead reads the escalated question: %v", err)
		}
		evs, err := b.Timeline(context.Background(), in.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if types := eventTypes(evs); !slices.Contains(types, hitl.EventReminded) || !slices.Contains(types, hitl.EventEscalated) {
			t.Errorf("timeline: got %v, want the reminded and escalated events", types)
		}
	})
}

func TestEscalationBusinessHoursAcrossDST(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The bubble starts on Saturday 2000-01-01; go to Friday 24 March
		// 2000, 17:50 in Berlin (CET). The clocks go forward on Sunday 26.
		time.Sleep(time.Until(time.Date(2000, 3, 24, 16, 50, 0, 0, time.UTC)))
		b := newBroker(t, nil)
		var fired firedSteps
		b.OnEscalation(fired.handle)
		mustCreate(t, b, escalating(hitl.EscalationStep{After: "30m", Remind: true, OnlyBetween: "09:00-18:00", TZ: "Europe/Berlin", Weekdays: true}))
		want := time.Date(2000, 3, 27, 7, 0, 0, 0, time.UTC) // Monday 09:00 CEST
		time.Sleep(time.Until(want) - time.Second)
		synctest.Wait()
		if got := fired.list(); len(got) != 0 {
			t.Fatalf("before Monday's opening: fired at %s, want nothing", got[0].At)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := fired.list(); len(got) != 1 || !got[0].At.Equal(want) {
			t.Fatalf("got %v, want one reminder at %s", eventTypes(got), want)
		}
	})
}

func TestEscalationEndsWithTheInteraction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, nil)
		var fired firedSteps
		b.OnEscalation(fired.handle)
		in := mustCreate(t, b, escalating(hitl.EscalationStep{After: "10m", Remind: true}))
		mustCreate(t, b, hitl.CreateRequest{Question: "Opted out?", Timeout: 3600, Escalation: []hitl.EscalationStep{}})
		time.Sleep(5 * time.Minute)
		if _, err := b.Cancel(context.Background(), in.ID, ""); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := fired.list(); len(got) != 0 {
			t.Errorf("after the cancel: got %v, want no step fired", eventTypes(got))
		}
	})
}

func TestEscalationDefaultPolicyAndRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "hitl.db")
		opts := &broker.Options{DefaultEscalation: []hitl.EscalationStep{{After: "10m", Remind: true}}}
		first := openBroker(t, path, opts)
		in := mustCreate(t, first, hitl.CreateRequest{Question: "Deploy?", Timeout: 3600})
		if len(in.Escalation) != 1 {
			t.Fatalf("the default policy: got %+v, want its one step", in.Escalation)
		}
		first.Close()
		time.Sleep(15 * time.Minute) // no process runs while the step comes due
		second := openBroker(t, path, nil)
		var fired firedSteps
		second.OnEscalation(fired.handle)
		time.Sleep(time.Minute) // the restarted timer's first look
		synctest.Wait()
		if got := fired.list(); len(got) != 1 || got[0].InteractionID != in.ID {
			t.Fatalf("after the restart: got %v, want the step fired once", eventTypes(got))
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := fired.list(); len(got) != 1 {
			t.Errorf("later: %d steps fired, want still 1", len(got))
		}
	})
}

func eventTypes(evs []*hitl.Event) []hitl.EventType {
	var out []hitl.EventType
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}
