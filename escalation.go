package hitl

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// MaxEscalationSteps bounds an interaction's escalation: reminders past
// ten are noise.
const MaxEscalationSteps = 10

// Escalation event types: a step of an interaction's escalation fired.
// Detail is the step's EscalationDetail as JSON.
const (
	EventReminded  EventType = "reminded"  // the current targets were told again
	EventEscalated EventType = "escalated" // targets were added and told
)

// ChannelEscalation names the durable rows (in a NotificationStore) that
// fire an interaction's escalation steps: one per step, the step's index
// as its Round, no recipient.
const ChannelEscalation = "escalation"

// ChannelSlackReminder names the durable rows (in a NotificationStore) of
// the thread replies fired escalation steps post in Slack: one per step
// that tells Slack, the step's index as its Round, no recipient. They are
// written with the step's event (Change.Schedule), so a reply is posted
// however the process that fired the step ends.
const ChannelSlackReminder = "slack_reminder"

// ChannelEmailReminder names the durable rows (in a NotificationStore) of
// the mails fired escalation steps send: one per step that tells email,
// the step's index as its Round, no recipient. Written with the step's
// event (Change.Schedule), each is turned into a round of mails, one per
// person, however the process that fired the step ends.
const ChannelEmailReminder = "email_reminder"

// Channels an escalation step may name. The web inbox is always told
// (through the live streams).
var escalationChannels = []string{ChannelSlack, ChannelEmail, ChannelWeb}

// EscalationStep is one step of an interaction's escalation: After its
// creation, remind the current targets, or add targets and tell them, on
// Channels (none: every channel). With OnlyBetween, a step due outside
// those hours (in TZ, on weekdays only with Weekdays) waits for the next
// opening.
type EscalationStep struct {
	After       string   `json:"after"` // a Go duration: "10m", "1h30m"
	Remind      bool     `json:"remind,omitempty"`
	AddTargets  *Targets `json:"add_targets,omitempty"`
	Channels    []string `json:"channels,omitempty"`
	OnlyBetween string   `json:"only_between,omitempty"` // "09:00-18:00"
	TZ          string   `json:"tz,omitempty"`           // IANA name; UTC when empty
	Weekdays    bool     `json:"weekdays,omitempty"`     // Monday to Friday only
}

// EscalationDetail is the detail of a reminded or escalated event: which
// step fired, whom it added, on which channels it told them.
type EscalationDetail struct {
	Step     int      `json:"step"` // index in the interaction's escalation
	Remind   bool     `json:"remind,omitempty"`
	Added    *Targets `json:"added,omitempty"`
	Channels []string `json:"channels,omitempty"`
}

// ParseEscalationDetail reads the detail of a reminded or escalated event.
func ParseEscalationDetail(ev *Event) (EscalationDetail, error) {
	var d EscalationDetail
	err := json.Unmarshal([]byte(ev.Detail), &d)
	return d, err
}

// StepDetail returns what step i of in does, as its event's detail says
// it: for the channels that tell it from the interaction alone (a
// durable row naming the step).
func (in *Interaction) StepDetail(i int) EscalationDetail {
	d := EscalationDetail{Step: i}
	if i >= 0 && i < len(in.Escalation) {
		st := in.Escalation[i]
		d.Remind, d.Channels = st.Remind, st.Channels
		if t := st.AddTargets; t != nil && len(t.Users)+len(t.Groups) > 0 {
			d.Added = t
		}
	}
	return d
}

// Tells reports whether the step's notifications go out on channel.
func (d EscalationDetail) Tells(channel string) bool {
	return len(d.Channels) == 0 || slices.Contains(d.Channels, channel)
}

// ParseEscalation reads an escalation policy given as JSON (the server's
// default, from a flag): a list of steps, checked as on a request whose
// deadline is the longest allowed.
func ParseEscalation(s string) ([]EscalationStep, error) {
	var steps []EscalationStep
	if err := json.Unmarshal([]byte(s), &steps); err != nil {
		return nil, Errorf(EINVALID, "escalation must be a JSON list of steps: %v", err)
	}
	if err := CheckEscalation(steps, MaxTimeout); err != nil {
		return nil, err
	}
	return steps, nil
}

// CheckEscalation checks steps for a question open for timeout: at most
// MaxEscalationSteps, each doing something, after a valid duration
// shorter than timeout and longer than the step before, with valid hours.
func CheckEscalation(steps []EscalationStep, timeout time.Duration) error {
	if len(steps) > MaxEscalationSteps {
		return Errorf(EINVALID, "escalation: at most %d steps; got %d", MaxEscalationSteps, len(steps))
	}
	var prev time.Duration
	for i, s := range steps {
		if err := s.check(prev, timeout); err != nil {
			return Errorf(EINVALID, "escalation[%d]: %s", i, err)
		}
		prev, _ = time.ParseDuration(s.After)
	}
	return nil
}

// check checks one step, after a step due prev after creation.
func (s EscalationStep) check(prev, timeout time.Duration) error {
	after, err := time.ParseDuration(s.After)
	switch {
	case err != nil:
		return fmt.Errorf("after must be a duration such as \"10m\" or \"1h30m\"; got %q", s.After)
	case after <= 0:
		return fmt.Errorf("after must be positive; got %q", s.After)
	case after <= prev:
		return fmt.Errorf("after (%s) must be later than the step before (%s)", after, prev)
	case after >= timeout:
		return fmt.Errorf("after (%s) must be before the deadline (%s after creation)", after, timeout)
	case !s.Remind && s.AddTargets.empty():
		return fmt.Errorf("a step must remind or add_targets")
	}
	if err := checkTargets(s.AddTargets, "add_targets"); err != nil {
		return err
	}
	for _, c := range s.Channels {
		if !slices.Contains(escalationChannels, c) {
			return fmt.Errorf("channels must be among %s; got %q", strings.Join(escalationChannels, ", "), c)
		}
	}
	if s.OnlyBetween == "" {
		if s.TZ != "" || s.Weekdays {
			return fmt.Errorf("tz and weekdays need only_between")
		}
		return nil
	}
	_, err = s.hours()
	return err
}

// empty reports whether t names no one.
func (t *Targets) empty() bool {
	return t == nil || len(t.Users) == 0 && len(t.Groups) == 0
}

// checkTargets checks a list of targets' names.
func checkTargets(t *Targets, name string) error {
	if t == nil {
		return nil
	}
	for _, l := range [][]string{t.Users, t.Groups} {
		if len(l) > MaxTargets {
			return fmt.Errorf("%s: at most %d users and %d groups", name, MaxTargets, MaxTargets)
		}
		for _, n := range l {
			if n == "" || len(n) > MaxNameLen || !validText(n) {
				return fmt.Errorf("%s: names must be 1 to %d bytes of text", name, MaxNameLen)
			}
		}
	}
	return nil
}

// Due returns when the step fires for an interaction created at created.
// The steps were checked (see CheckEscalation).
func (s EscalationStep) Due(created time.Time) time.Time {
	after, _ := time.ParseDuration(s.After)
	due := created.Add(after)
	if s.OnlyBetween == "" {
		return due
	}
	h, err := s.hours()
	if err != nil {
		return due
	}
	return h.next(due)
}

// AddTo returns targets t widened by the step's add_targets, each name
// once. An interaction with no targets is open to anyone already, and
// stays so: it is returned as it is.
func (s EscalationStep) AddTo(t *Targets) *Targets {
	if t.empty() || s.AddTargets.empty() {
		return t
	}
	out := &Targets{Users: slices.Clone(t.Users), Groups: slices.Clone(t.Groups)}
	for _, u := range s.AddTargets.Users {
		if !slices.Contains(out.Users, u) {
			out.Users = append(out.Users, u)
		}
	}
	for _, g := range s.AddTargets.Groups {
		if !slices.Contains(out.Groups, g) {
			out.Groups = append(out.Groups, g)
		}
	}
	return out
}

// MayWiden reports whether in's targets may still change: it has targets
// (an untargeted question is open to anyone and stays so) and a step of
// its escalation that adds targets has not fired yet.
func (in *Interaction) MayWiden() bool {
	if in.Targets.Untargeted() {
		return false
	}
	for i, s := range in.Escalation {
		if !s.AddTargets.empty() && !slices.Contains(in.EscalatedSteps, i) {
			return true
		}
	}
	return false
}

// ApplyEscalation fires step i of in's escalation at now: it widens in's
// targets and records the step as fired, and returns its event (reminded
// or escalated). A step that fired already changes nothing: the event is
// nil. It is a PendingChange's work.
func (in *Interaction) ApplyEscalation(i int, now time.Time) (*Event, error) {
	if i < 0 || i >= len(in.Escalation) {
		return nil, Errorf(ENOTFOUND, "interaction %s has no escalation step %d", in.ID, i)
	}
	if slices.Contains(in.EscalatedSteps, i) {
		return nil, nil
	}
	s := in.Escalation[i]
	in.Targets = s.AddTo(in.Targets)
	in.EscalatedSteps = append(in.EscalatedSteps, i)
	d := EscalationDetail{Step: i, Remind: s.Remind, Channels: s.Channels}
	typ := EventReminded
	if !s.AddTargets.empty() {
		typ, d.Added = EventEscalated, s.AddTargets
	}
	b, _ := json.Marshal(d) // plain values: cannot fail
	return &Event{Type: typ, InteractionID: in.ID, At: now, Detail: string(b)}, nil
}

// setEscalation checks and keeps the request's escalation.
func (in *Interaction) setEscalation(steps []EscalationStep) error {
	if err := CheckEscalation(steps, in.Deadline.Sub(in.CreatedAt)); err != nil {
		return err
	}
	in.Escalation = slices.Clone(steps)
	return nil
}

// DefaultEscalation gives in the server's default escalation policy
// unless its request named one (an empty list opts out): the steps due
// before its deadline.
func (in *Interaction) DefaultEscalation(req CreateRequest, policy []EscalationStep) {
	if req.Escalation != nil || len(policy) == 0 {
		return
	}
	open := in.Deadline.Sub(in.CreatedAt)
	for _, s := range policy {
		if after, err := time.ParseDuration(s.After); err == nil && after < open {
			in.Escalation = append(in.Escalation, s)
		}
	}
}
