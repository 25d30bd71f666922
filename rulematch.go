package hitl

import (
	"encoding/json"
	"path"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// shellControl is what a command matched by prefix must not hold: what
// chains, pipes, substitutes, redirects or escapes in a POSIX shell, and
// line breaks, which end a command.
var shellControl = []string{";", "&", "|", "`", "$(", ">", "<", "\n", "\r", "\\", "\x00"}

// ShellControl reports whether a shell command holds control syntax (see
// shellControl), so that a prefix rule for "git status" never matches
// "git status; rm -rf /", "git status && x", "git status $(x)" or a second
// line. It errs on the side of not matching: a quoted ";" counts too.
func ShellControl(cmd string) bool {
	for _, s := range shellControl {
		if strings.Contains(cmd, s) {
			return true
		}
	}
	return false
}

// hasDotDot reports whether a path (or pattern) has a ".." segment, with
// "/" or "\" as separators.
func hasDotDot(p string) bool {
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}

// Asker is who asks for an action: the agent's declared name (its
// source_agent) and the authenticated caller that created the question.
type Asker struct {
	SourceAgent string
	CreatedBy   string
}

// AskerOf returns who asked the interaction in.
func AskerOf(in *Interaction) Asker {
	return Asker{SourceAgent: in.SourceAgent, CreatedBy: in.CreatedBy}
}

// Matches reports whether r decides a call of the action a asked by who at
// now: r is active, its scope is that agent (or every agent), that caller
// (when r is bound to one) and that action, and its match holds.
func (r *Rule) Matches(who Asker, a *Action, now time.Time) bool {
	if !r.inScope(who, a, now) {
		return false
	}
	return r.Match.Matches(a.Args)
}

// inScope reports whether r is active at now for the asker and the
// action's name, whatever its match.
func (r *Rule) inScope(who Asker, a *Action, now time.Time) bool {
	return a != nil && r.Active(now) && r.ActionName == a.Name &&
		(r.SourceAgent == who.SourceAgent || r.SourceAgent == AnyAgent) &&
		(r.AskedBy == "" || r.AskedBy == who.CreatedBy)
}

// Matches reports whether the argument m names, in args (a JSON object),
// meets m's predicate. A nil m matches every call; an argument that is
// missing, or not a string for prefix and glob, never matches.
func (m *RuleMatch) Matches(args json.RawMessage) bool {
	if m == nil {
		return true
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return false
	}
	return m.matchFields(fields)
}

// matchFields is Matches on args decoded (nil when they are not an
// object).
func (m *RuleMatch) matchFields(fields map[string]json.RawMessage) bool {
	if m == nil {
		return true
	}
	v, ok := fields[m.Arg]
	if !ok {
		return false
	}
	switch {
	case m.Prefix != "":
		var cmd string
		if json.Unmarshal(v, &cmd) != nil {
			return false
		}
		return prefixMatch(m.Prefix, cmd)
	case m.Glob != "":
		var p string
		if json.Unmarshal(v, &p) != nil {
			return false
		}
		return globMatch(m.Glob, p)
	case m.Equals != nil:
		return JSONEqual(m.Equals, v)
	}
	return false
}

// prefixMatch reports whether cmd is prefix, or prefix, a space and more,
// and holds no shell control syntax.
func prefixMatch(prefix, cmd string) bool {
	if ShellControl(cmd) {
		return false
	}
	return cmd == prefix || strings.HasPrefix(cmd, prefix+" ")
}

// globMatch reports whether the path p, cleaned, matches the doublestar
// pattern glob. A path with ".." segments never matches: cleaned, "src/../
// etc/passwd" would be "etc/passwd", which a rule for "src/**" must not
// let through by accident, and one for "**" need not either. An absolute
// path only matches an absolute pattern, a relative one a relative
// pattern.
func globMatch(glob, p string) bool {
	if p == "" || strings.IndexByte(p, 0) >= 0 || hasDotDot(p) {
		return false
	}
	ok, err := doublestar.Match(glob, path.Clean(p))
	return err == nil && ok
}

// DecidingRule returns the rule among rules that decides a call of a asked
// by who at now, or nil when none matches. A matching deny rule beats
// every allow rule; among rules of the same effect the oldest wins (then
// the smallest ID), whatever the order of rules.
func DecidingRule(rules []*Rule, who Asker, a *Action, now time.Time) *Rule {
	if a == nil {
		return nil
	}
	var fields map[string]json.RawMessage // decoded once, for every rule
	if json.Unmarshal(a.Args, &fields) != nil {
		fields = nil
	}
	var best *Rule
	for _, r := range rules {
		if !r.inScope(who, a, now) || !r.Match.matchFields(fields) {
			continue
		}
		if best == nil || beats(r, best) {
			best = r
		}
	}
	return best
}

// beats reports whether r takes precedence over s: deny over allow, then
// the older, then the smaller ID.
func beats(r, s *Rule) bool {
	if r.Effect != s.Effect {
		return r.Effect == RuleDeny
	}
	if !r.CreatedAt.Equal(s.CreatedAt) {
		return r.CreatedAt.Before(s.CreatedAt)
	}
	return r.ID < s.ID
}
