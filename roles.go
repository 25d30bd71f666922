package hitl

import "slices"

// Role is what a caller may do.
type Role string

// Roles. An agent asks and waits; a responder (a person) answers what is
// meant for them; an admin may do everything.
const (
	RoleAgent     Role = "agent"     // create, read, wait on and cancel its own interactions
	RoleResponder Role = "responder" // see and answer untargeted interactions and those targeting it
	RoleAdmin     Role = "admin"     // everything
)

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool {
	return r == RoleAgent || r == RoleResponder || r == RoleAdmin
}

// Messages of the refusals below.
const (
	msgAgentsCannotAnswer  = "agents cannot answer"
	msgNotIntended         = "forbidden: not the intended respondent"
	msgRespondersCannotAsk = "responders cannot ask questions; use an agent token"
	msgRespondersCannotEnd = "responders cannot cancel interactions"
)

// Audience is a person as targets see them: a user name and the groups the
// user belongs to.
type Audience struct {
	User   string   `json:"user"`
	Groups []string `json:"groups,omitempty"`
}

// Untargeted reports whether t lets any responder see and answer.
func (t *Targets) Untargeted() bool {
	return t == nil || len(t.Users) == 0 && len(t.Groups) == 0
}

// Includes reports whether t is untargeted or names a's user or one of
// a's groups.
func (t *Targets) Includes(a Audience) bool {
	if t.Untargeted() {
		return true
	}
	if a.User != "" && slices.Contains(t.Users, a.User) {
		return true
	}
	for _, g := range a.Groups {
		if slices.Contains(t.Groups, g) {
			return true
		}
	}
	return false
}

// Audience returns the caller as targets see them.
func (c Caller) Audience() Audience {
	return Audience{User: c.Name, Groups: c.Groups}
}

// unrestricted reports whether c may do everything: an admin, or trusted
// in-process code (no role).
func (c Caller) unrestricted() bool {
	return c.Role == RoleAdmin || c.Role == ""
}

// CanSee reports whether c may see in (get, wait on, list, receive it on a
// live stream): an admin everything, an agent what it created, a responder
// what is untargeted or targets it.
func CanSee(c Caller, in *Interaction) bool {
	switch {
	case c.unrestricted():
		return true
	case c.Role == RoleAgent:
		return in.CreatedBy == c.Name
	case c.Role == RoleResponder:
		return in.Targets.Includes(c.Audience())
	}
	return false
}

// CanSeeEvent reports whether c may be told about ev (on a live stream,
// or reading the event log): only events of an interaction c may see
// (CanSee), so a person who is not a target never receives the question.
// Events of no interaction are for no one. The creator never changes and
// targets only grow (an escalation step adds some), so whoever may see
// an event may see every later event of its interaction.
func CanSeeEvent(c Caller, ev *Event) bool {
	return ev.Interaction != nil && CanSee(c, ev.Interaction)
}

// CanSeeAll reports whether c may see every interaction at once, as counts
// for operations (metrics): an admin, or trusted in-process code.
func CanSeeAll(c Caller) bool { return c.unrestricted() }

// CanRespond returns nil when c may answer at all, else the EFORBIDDEN
// error to give: agents never answer. It needs no interaction, so it is
// checked before looking one up and says nothing about whether it exists.
func CanRespond(c Caller) error {
	switch {
	case c.unrestricted(), c.Role == RoleResponder:
		return nil
	case c.Role == RoleAgent:
		return Errorf(EFORBIDDEN, msgAgentsCannotAnswer)
	}
	return Errorf(EFORBIDDEN, "role %q may not answer", c.Role)
}

// CanAnswer returns nil when c may answer in, else the EFORBIDDEN error to
// give: an admin answers anything, a responder what is untargeted or
// targets it, an agent nothing.
func CanAnswer(c Caller, in *Interaction) error {
	if err := CanRespond(c); err != nil {
		return err
	}
	if c.Role == RoleResponder && !in.Targets.Includes(c.Audience()) {
		return Errorf(EFORBIDDEN, msgNotIntended)
	}
	return nil
}

// CanCreate returns nil when c may ask questions (agents and admins), else
// the EFORBIDDEN error to give.
func CanCreate(c Caller) error {
	switch {
	case c.unrestricted(), c.Role == RoleAgent:
		return nil
	case c.Role == RoleResponder:
		return Errorf(EFORBIDDEN, msgRespondersCannotAsk)
	}
	return Errorf(EFORBIDDEN, "role %q may not ask questions", c.Role)
}

// CanCancel returns nil when c may cancel interactions at all (agents,
// their own, and admins), else the EFORBIDDEN error to give. Which ones an
// agent may cancel is CanSee's rule.
func CanCancel(c Caller) error {
	switch {
	case c.unrestricted(), c.Role == RoleAgent:
		return nil
	case c.Role == RoleResponder:
		return Errorf(EFORBIDDEN, msgRespondersCannotEnd)
	}
	return Errorf(EFORBIDDEN, "role %q may not cancel interactions", c.Role)
}

// Restrict narrows f to what c may see: an agent's own interactions, or a
// responder's audience. It reports false when nothing can match (an agent
// asking for another agent's interactions).
func Restrict(c Caller, f ListFilter) (ListFilter, bool) {
	switch {
	case c.unrestricted():
		return f, true
	case c.Role == RoleAgent:
		if f.CreatedBy != "" && f.CreatedBy != c.Name {
			return f, false
		}
		f.CreatedBy = c.Name
		return f, true
	case c.Role == RoleResponder:
		a := c.Audience()
		f.VisibleTo = &a
		return f, true
	}
	return f, false
}

// msgRulesByAdmins is the refusal of a rule made through the rules API by
// anyone but an admin.
const msgRulesByAdmins = "only admins make rules directly; a person makes one by answering an action with \"always\""

// CanMakeRules returns nil when c may make rules through the rules API
// (admins), else the EFORBIDDEN error to give. People make rules by
// answering an action with "always", which CanAnswer governs.
func CanMakeRules(c Caller) error {
	if c.unrestricted() {
		return nil
	}
	return Errorf(EFORBIDDEN, msgRulesByAdmins)
}

// CanSeeRule reports whether c may see and revoke r: an admin every rule,
// anyone else the rules they made.
func CanSeeRule(c Caller, r *Rule) bool {
	return c.unrestricted() || r.CreatedBy == c.Name
}

// RestrictRules narrows f to the rules c may see. It reports false when
// nothing can match (someone asking for another's rules).
func RestrictRules(c Caller, f RuleFilter) (RuleFilter, bool) {
	if c.unrestricted() {
		return f, true
	}
	if f.CreatedBy != "" && f.CreatedBy != c.Name {
		return f, false
	}
	f.CreatedBy = c.Name
	return f, true
}
