package hitl_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

func TestEscalationDue(t *testing.T) {
	berlinHours := hitl.EscalationStep{After: "30m", Remind: true, OnlyBetween: "09:00-18:00", TZ: "Europe/Berlin", Weekdays: true}
	utc := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tt := range []struct {
		name    string
		step    hitl.EscalationStep
		created string
		want    string
	}{
		{"no hours", hitl.EscalationStep{After: "10m", Remind: true}, "2026-03-27T23:50:00Z", "2026-03-28T00:00:00Z"},
		{"within hours", berlinHours, "2026-03-27T10:00:00Z", "2026-03-27T10:30:00Z"},
		// Friday 17:50 CET: 18:20 is closed; Monday opens at 09:00 CEST,
		// after the clocks went forward on Sunday.
		{"over the spring DST change", berlinHours, "2026-03-27T16:50:00Z", "2026-03-30T07:00:00Z"},
		// Saturday: Monday 09:00 CET, after the clocks went back.
		{"over the autumn DST change", berlinHours, "2026-10-24T12:00:00Z", "2026-10-26T08:00:00Z"},
		{"before opening", berlinHours, "2026-06-02T04:00:00Z", "2026-06-02T07:00:00Z"},
		{"every day", hitl.EscalationStep{After: "1h", Remind: true, OnlyBetween: "09:00-17:00", TZ: "America/New_York"}, "2026-03-07T23:00:00Z", "2026-03-08T13:00:00Z"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := hitl.CheckEscalation([]hitl.EscalationStep{tt.step}, 30*24*time.Hour); err != nil {
				t.Fatalf("check: %v", err)
			}
			if got, want := tt.step.Due(utc(tt.created)), utc(tt.want); !got.Equal(want) {
				t.Errorf("due: got %s, want %s", got.UTC().Format(time.RFC3339), want.Format(time.RFC3339))
			}
		})
	}
}

func TestCheckEscalation(t *testing.T) {
	step := func(after string) hitl.EscalationStep { return hitl.EscalationStep{After: after, Remind: true} }
	many := make([]hitl.EscalationStep, hitl.MaxEscalationSteps+1)
	for i := range many {
		many[i] = step((time.Duration(i+1) * time.Minute).String())
	}
	for _, tt := range []struct {
		name  string
		steps []hitl.EscalationStep
		want  string // in the error; "" for none
	}{
		{"fine", []hitl.EscalationStep{step("10m"), {After: "30m", AddTargets: &hitl.Targets{Groups: []string{"sre-leads"}}, Channels: []string{"slack", "email"}}}, ""},
		{"not increasing", []hitl.EscalationStep{step("30m"), step("10m")}, "later than the step before"},
		{"same after", []hitl.EscalationStep{step("10m"), step("10m")}, "later than the step before"},
		{"does nothing", []hitl.EscalationStep{{After: "10m"}}, "must remind or add_targets"},
		{"empty targets", []hitl.EscalationStep{{After: "10m", AddTargets: &hitl.Targets{}}}, "must remind or add_targets"},
		{"bad duration", []hitl.EscalationStep{step("ten minutes")}, "must be a duration"},
		{"negative", []hitl.EscalationStep{step("-5m")}, "must be positive"},
		{"after the deadline", []hitl.EscalationStep{step("2h")}, "before the deadline"},
		{"too many", many, "at most 10 steps"},
		{"bad channel", []hitl.EscalationStep{{After: "10m", Remind: true, Channels: []string{"pager"}}}, "channels must be among"},
		{"bad hours", []hitl.EscalationStep{{After: "10m", Remind: true, OnlyBetween: "9-18"}}, "HH:MM-HH:MM"},
		{"closing first", []hitl.EscalationStep{{After: "10m", Remind: true, OnlyBetween: "18:00-09:00"}}, "open before it closes"},
		{"bad zone", []hitl.EscalationStep{{After: "10m", Remind: true, OnlyBetween: "09:00-18:00", TZ: "Mars/Olympus"}}, "IANA time zone"},
		{"zone without hours", []hitl.EscalationStep{{After: "10m", Remind: true, TZ: "Europe/Berlin"}}, "need only_between"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := hitl.CheckEscalation(tt.steps, time.Hour)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("got %v, want no error", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || hitl.ErrorCode(err) != hitl.EINVALID):
				t.Fatalf("got %v, want EINVALID with %q", err, tt.want)
			}
		})
	}
}

func TestApplyEscalation(t *testing.T) {
	in := &hitl.Interaction{ID: "i1", Targets: &hitl.Targets{Users: []string{"alice"}}, Escalation: []hitl.EscalationStep{
		{After: "10m", Remind: true},
		{After: "30m", AddTargets: &hitl.Targets{Users: []string{"alice"}, Groups: []string{"sre-leads"}}, Channels: []string{"email"}},
	}}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev, err := in.ApplyEscalation(0, now)
	if err != nil || ev.Type != hitl.EventReminded {
		t.Fatalf("step 0: got %+v, %v; want a reminded event", ev, err)
	}
	ev, err = in.ApplyEscalation(1, now)
	if err != nil || ev.Type != hitl.EventEscalated {
		t.Fatalf("step 1: got %+v, %v; want an escalated event", ev, err)
	}
	d, err := hitl.ParseEscalationDetail(ev)
	if err != nil || d.Step != 1 || d.Added == nil || d.Added.Groups[0] != "sre-leads" || !d.Tells("email") || d.Tells("slack") {
		t.Errorf("detail: got %+v, %v", d, err)
	}
	got, _ := json.Marshal(in.Targets)
	if want := `{"users":["alice"],"groups":["sre-leads"]}`; string(got) != want {
		t.Errorf("targets: got %s, want %s", got, want)
	}
	if ev, err := in.ApplyEscalation(1, now); ev != nil || err != nil {
		t.Errorf("step 1 again: got %+v, %v; want nothing", ev, err)
	}
	open := &hitl.Interaction{ID: "i2", Escalation: in.Escalation}
	if _, err := open.ApplyEscalation(1, now); err != nil || open.Targets != nil {
		t.Errorf("untargeted: targets %+v, %v; want still open to anyone", open.Targets, err)
	}
}

func TestDefaultEscalation(t *testing.T) {
	policy, err := hitl.ParseEscalation(`[{"after":"10m","remind":true},{"after":"2h","remind":true}]`)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	in, err := hitl.NewInteraction(hitl.CreateRequest{Question: "q", Timeout: 3600}, hitl.Caller{}, now)
	if err != nil {
		t.Fatal(err)
	}
	in.DefaultEscalation(hitl.CreateRequest{}, policy)
	if len(in.Escalation) != 1 || in.Escalation[0].After != "10m" {
		t.Errorf("default within an hour: got %+v, want the 10m step only", in.Escalation)
	}
	var req hitl.CreateRequest
	if err := json.Unmarshal([]byte(`{"question":"q","escalation":[]}`), &req); err != nil {
		t.Fatal(err)
	}
	out := &hitl.Interaction{Deadline: now.Add(time.Hour), CreatedAt: now}
	out.DefaultEscalation(req, policy)
	if len(out.Escalation) != 0 {
		t.Errorf("opted out: got %+v, want none", out.Escalation)
	}
	if b, _ := json.Marshal(req); !strings.Contains(string(b), `"escalation":[]`) {
		t.Errorf("an opt-out must survive the Go client's encoding: got %s", b)
	}
	if _, err := hitl.ParseEscalation(`{"after":"10m"}`); hitl.ErrorCode(err) != hitl.EINVALID {
		t.Errorf("not a list: got %v, want EINVALID", err)
	}
}

// TestMayWiden: only a targeted question with a step that adds targets
// still to fire may have its targets changed.
func TestMayWiden(t *testing.T) {
	add := hitl.EscalationStep{After: "10m", AddTargets: &hitl.Targets{Groups: []string{"sre"}}}
	remind := hitl.EscalationStep{After: "5m", Remind: true}
	alice := &hitl.Targets{Users: []string{"alice"}}
	for _, c := range []struct {
		name string
		in   hitl.Interaction
		want bool
	}{
		{"NoEscalation", hitl.Interaction{Targets: alice}, false},
		{"Untargeted", hitl.Interaction{Escalation: []hitl.EscalationStep{add}}, false},
		{"EmptyTargets", hitl.Interaction{Targets: &hitl.Targets{}, Escalation: []hitl.EscalationStep{add}}, false},
		{"RemindOnly", hitl.Interaction{Targets: alice, Escalation: []hitl.EscalationStep{remind}}, false},
		{"AddToFire", hitl.Interaction{Targets: alice, Escalation: []hitl.EscalationStep{remind, add}, EscalatedSteps: []int{0}}, true},
		{"AddFired", hitl.Interaction{Targets: alice, Escalation: []hitl.EscalationStep{remind, add}, EscalatedSteps: []int{1}}, false},
	} {
		if got := c.in.MayWiden(); got != c.want {
			t.Errorf("%s: MayWiden() = %v, want %v", c.name, got, c.want)
		}
	}
}
