package hitl_test

import (
	"testing"

	"github.com/hitl-sh/hitl"
)

// TestRules is the authorization table: every role against interactions
// of every targeting, for each rule.
func TestRules(t *testing.T) {
	mine := &hitl.Interaction{CreatedBy: "build-bot"}
	toAlice := &hitl.Interaction{CreatedBy: "build-bot", Targets: &hitl.Targets{Users: []string{"alice"}}}
	toOps := &hitl.Interaction{CreatedBy: "other-bot", Targets: &hitl.Targets{Groups: []string{"ops"}}}
	empty := &hitl.Interaction{CreatedBy: "other-bot", Targets: &hitl.Targets{}}

	agent := hitl.Caller{Name: "build-bot", Role: hitl.RoleAgent}
	otherAgent := hitl.Caller{Name: "other-bot", Role: hitl.RoleAgent}
	alice := hitl.Caller{Name: "alice", Role: hitl.RoleResponder}
	bob := hitl.Caller{Name: "bob", Role: hitl.RoleResponder, Groups: []string{"ops"}}
	admin := hitl.Caller{Name: "root", Role: hitl.RoleAdmin}
	inProcess := hitl.Caller{Name: "embedded"}
	unknown := hitl.Caller{Name: "x", Role: "superuser"}

	// "" allowed, else the error code.
	const ok, forbidden = "", hitl.EFORBIDDEN
	tests := []struct {
		name   string
		c      hitl.Caller
		in     *hitl.Interaction
		see    bool
		answer string
	}{
		{"AgentOwn", agent, mine, true, forbidden},
		{"AgentOwnTargeted", agent, toAlice, true, forbidden},
		{"AgentOthers", agent, toOps, false, forbidden},
		{"OtherAgent", otherAgent, mine, false, forbidden},
		{"ResponderUntargeted", alice, mine, true, ok},
		{"ResponderEmptyTargets", alice, empty, true, ok},
		{"ResponderNamed", alice, toAlice, true, ok},
		{"ResponderNotNamed", alice, toOps, false, forbidden},
		{"ResponderByGroup", bob, toOps, true, ok},
		{"ResponderNotInTargets", bob, toAlice, false, forbidden},
		{"Admin", admin, toAlice, true, ok},
		{"InProcess", inProcess, toOps, true, ok},
		{"UnknownRole", unknown, mine, false, forbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hitl.CanSee(tt.c, tt.in); got != tt.see {
				t.Errorf("CanSee: got %v, want %v", got, tt.see)
			}
			if got := hitl.ErrorCode(hitl.CanAnswer(tt.c, tt.in)); got != tt.answer {
				t.Errorf("CanAnswer: got code %q, want %q", got, tt.answer)
			}
			if got := hitl.CanSeeEvent(tt.c, &hitl.Event{Type: hitl.EventAnswered, Interaction: tt.in}); got != tt.see {
				t.Errorf("CanSeeEvent: got %v, want %v (as CanSee)", got, tt.see)
			}
		})
	}

	byRole := []struct {
		c                       hitl.Caller
		create, cancel, respond string
		all                     bool
	}{
		{agent, ok, ok, forbidden, false},
		{alice, forbidden, forbidden, ok, false},
		{admin, ok, ok, ok, true},
		{inProcess, ok, ok, ok, true},
		{unknown, forbidden, forbidden, forbidden, false},
	}
	for _, tt := range byRole {
		if got := hitl.CanSeeAll(tt.c); got != tt.all {
			t.Errorf("CanSeeAll(%s): got %v, want %v", tt.c.Name, got, tt.all)
		}
		if hitl.CanSeeEvent(tt.c, &hitl.Event{Type: hitl.EventRuleCreated}) {
			t.Errorf("CanSeeEvent(%s) of an event of no interaction: got true, want false", tt.c.Name)
		}
		if got := hitl.ErrorCode(hitl.CanCreate(tt.c)); got != tt.create {
			t.Errorf("CanCreate(%s): got code %q, want %q", tt.c.Name, got, tt.create)
		}
		if got := hitl.ErrorCode(hitl.CanCancel(tt.c)); got != tt.cancel {
			t.Errorf("CanCancel(%s): got code %q, want %q", tt.c.Name, got, tt.cancel)
		}
		if got := hitl.ErrorCode(hitl.CanRespond(tt.c)); got != tt.respond {
			t.Errorf("CanRespond(%s): got code %q, want %q", tt.c.Name, got, tt.respond)
		}
	}
}

func TestRefusalMessages(t *testing.T) {
	toAlice := &hitl.Interaction{Targets: &hitl.Targets{Users: []string{"alice"}}}
	cases := []struct {
		err  error
		want string
	}{
		{hitl.CanAnswer(hitl.Caller{Name: "bob", Role: hitl.RoleResponder}, toAlice), "forbidden: not the intended respondent"},
		{hitl.CanAnswer(hitl.Caller{Name: "bot", Role: hitl.RoleAgent}, toAlice), "agents cannot answer"},
	}
	for _, c := range cases {
		if got := hitl.ErrorMessage(c.err); got != c.want {
			t.Errorf("message: got %q, want %q", got, c.want)
		}
	}
}

func TestRestrict(t *testing.T) {
	f := hitl.ListFilter{Status: hitl.StatusPending}
	got, ok := hitl.Restrict(hitl.Caller{Name: "build-bot", Role: hitl.RoleAgent}, f)
	if !ok || got.CreatedBy != "build-bot" || got.VisibleTo != nil || got.Status != hitl.StatusPending {
		t.Errorf("agent: got %+v, %v; want its own pending interactions", got, ok)
	}
	f.CreatedBy = "other-bot"
	if _, ok := hitl.Restrict(hitl.Caller{Name: "build-bot", Role: hitl.RoleAgent}, f); ok {
		t.Error("agent asking for another agent's interactions: got ok, want nothing to match")
	}
	got, ok = hitl.Restrict(hitl.Caller{Name: "bob", Role: hitl.RoleResponder, Groups: []string{"ops"}}, hitl.ListFilter{VisibleTo: &hitl.Audience{}})
	if !ok || got.VisibleTo == nil || got.VisibleTo.User != "bob" || len(got.VisibleTo.Groups) != 1 {
		t.Errorf("responder: got %+v, %v; want bob's audience", got, ok)
	}
	got, ok = hitl.Restrict(hitl.Caller{Name: "root", Role: hitl.RoleAdmin}, hitl.ListFilter{CreatedBy: "x"})
	if !ok || got.CreatedBy != "x" || got.VisibleTo != nil {
		t.Errorf("admin: got %+v, %v; want the filter unchanged", got, ok)
	}
}

func TestValidateName(t *testing.T) {
	for _, name := range []string{"alice", "build-bot", "a.b_c@example.com", "x+y", "A1"} {
		if err := hitl.ValidateName("user", name); err != nil {
			t.Errorf("ValidateName(%q): %v", name, err)
		}
	}
	long := string(make([]byte, hitl.MaxNameLen+1))
	for _, name := range []string{"", "local", "a b", "a/b", "é", "a\x00", long} {
		if err := hitl.ValidateName("user", name); hitl.ErrorCode(err) != hitl.EINVALID {
			t.Errorf("ValidateName(%q): got %v, want invalid", name, err)
		}
	}
	if err := hitl.ValidateName("group", "local"); err != nil {
		t.Errorf("ValidateName(group local): got %v, want nil", err)
	}
}
