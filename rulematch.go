package hitl

import (
	"encoding/json"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/hitl-sh/hitl/shell"
)

// Matching. An allow rule and a deny rule read the same match in opposite
// ways, each the safe way for what it decides:
//
//   - An allow rule takes the narrowest reading: a command matches only
//     when it is one plain command (no ; & | $( ` > < assignments,
//     variables, patterns or line breaks) whose words begin with the
//     rule's; a path only when, holding no "..", it matches the pattern
//     as written, case and all.
//   - A deny rule takes the widest: a command matches when anything it
//     may run is the rule's command (every part of a compound command,
//     substitutions, wrappers such as env and sudo, programs named by a
//     path, options between the program and its operands, any case); a
//     path after it is cleaned and compared without regard to case.
//
// When a deny rule's reading is in doubt (the command computes its
// program or arguments, hands a script to a shell, or names the program
// as another's argument; a relative path against an absolute pattern), it
// does not deny, and no allow rule approves either: a person decides.

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

// inScope reports whether r is active at now for the action in, whatever
// its match: the action's name (or kind, for a rule on a kind), its agent (or every agent), the caller
// that asked it (when r is bound to one), and its targets (when r was
// made by a person whose answers reach only some: see Rule.Within).
func (r *Rule) inScope(in *Interaction, now time.Time) bool {
	a := in.Action
	return a != nil && r.Active(now) && (r.Kind == "" && r.ActionName == a.Name || r.Kind != "" && r.Kind == a.Kind) &&
		(r.SourceAgent == in.SourceAgent || r.SourceAgent == AnyAgent) &&
		(r.AskedBy == "" || r.AskedBy == in.CreatedBy) &&
		(r.Within == nil || in.Targets.Includes(*r.Within))
}

// Matches reports whether the argument m names, in args (a JSON object),
// meets m's predicate as an allow rule reads it. A nil m matches every
// call; an argument that is missing, or not a string for a command or a
// path, never matches.
func (m *RuleMatch) Matches(args json.RawMessage) bool {
	return m.allows(newCallArgs(args))
}

// callArgs are an action's arguments, decoded once for every rule that
// reads them, with each command argument parsed once.
type callArgs struct {
	fields map[string]json.RawMessage // nil when the args are not an object
	lines  map[string]parsedLine
}

// parsedLine is an argument read once: as a string, and parsed as a
// command line.
type parsedLine struct {
	text     string
	isString bool
	line     *shell.Line // nil when the argument is not a string
	err      error       // the parser's
}

// newCallArgs decodes args.
func newCallArgs(args json.RawMessage) *callArgs {
	c := &callArgs{}
	if json.Unmarshal(args, &c.fields) != nil {
		c.fields = nil
	}
	return c
}

// line returns the argument arg parsed as a command line: nil line and
// error when it is not a string.
func (c *callArgs) line(arg string) parsedLine {
	if p, ok := c.lines[arg]; ok {
		return p
	}
	var p parsedLine
	if json.Unmarshal(c.fields[arg], &p.text) == nil {
		p.isString = true
		p.line, p.err = shell.Parse(p.text)
	}
	if c.lines == nil {
		c.lines = map[string]parsedLine{}
	}
	c.lines[arg] = p
	return p
}

// allows reports whether m matches the call as an allow rule reads it.
func (m *RuleMatch) allows(c *callArgs) bool {
	if m == nil {
		return true
	}
	v, ok := c.fields[m.Arg]
	if !ok {
		return false
	}
	switch {
	case m.Prefix != "" || m.Command != "":
		p, err := m.commandPattern()
		l := c.line(m.Arg)
		return err == nil && l.err == nil && p.Allows(l.line, m.Command != "")
	case m.Glob != "":
		var s string
		return json.Unmarshal(v, &s) == nil && globMatch(m.Glob, s)
	case m.Equals != nil:
		return JSONEqual(m.Equals, v)
	}
	return false
}

// denies says whether m matches the call as a deny rule reads it.
func (m *RuleMatch) denies(c *callArgs) shell.Match {
	if m == nil {
		return shell.Yes
	}
	if c.fields == nil {
		return shell.Maybe
	}
	v, ok := c.fields[m.Arg]
	if !ok {
		return shell.No
	}
	a := c.line(m.Arg)
	switch {
	case m.Prefix != "" || m.Command != "":
		p, err := m.commandPattern()
		if err != nil {
			return shell.Maybe
		}
		var argv []string
		switch {
		case a.isString && a.err == nil:
			return p.MayRunLine(a.line)
		case a.isString:
			return shell.Maybe
		case json.Unmarshal(v, &argv) == nil && len(argv) > 0:
			return p.MayRunArgv(argv)
		}
		return shell.Maybe
	case m.Glob != "":
		if !a.isString {
			return shell.Maybe
		}
		return globMayMatch(m.Glob, a.text)
	case m.Equals != nil:
		if JSONEqual(m.Equals, v) {
			return shell.Yes
		}
	}
	return shell.No
}

// commandPattern returns the command of a prefix or command match,
// parsed once for every rule that states it.
func (m *RuleMatch) commandPattern() (shell.Pattern, error) {
	src := m.Prefix
	if src == "" {
		src = m.Command
	}
	if p, ok := patterns.Load(src); ok {
		return p.(shell.Pattern), nil
	}
	p, err := shell.ParsePattern(src)
	if err != nil {
		return shell.Pattern{}, err
	}
	patterns.Store(src, p)
	return p, nil
}

// patterns are the commands of rules, parsed, by their text: as many as
// there are distinct commands in rules (each at most MaxRuleGlobLen).
var patterns sync.Map

// globMatch reports whether the path p, cleaned, matches the doublestar
// pattern glob, as an allow rule reads it. A path with ".." segments never
// matches: cleaned, "src/../etc/passwd" would be "etc/passwd", which a
// rule for "src/**" must not let through by accident, and one for "**"
// need not either. An absolute path only matches an absolute pattern, a
// relative one a relative pattern.
func globMatch(glob, p string) bool {
	if p == "" || strings.IndexByte(p, 0) >= 0 || hasDotDot(p) {
		return false
	}
	ok, err := doublestar.Match(glob, path.Clean(p))
	return err == nil && ok
}

// globMayMatch says whether the path p may be one that glob names, as a
// deny rule reads it: "\" taken as "/", the path cleaned ("/tmp/../etc"
// is "/etc"), both compared without regard to case (as macOS and Windows
// compare names). A relative pattern matches at any depth of an absolute
// path ("secrets/**" denies "/home/me/app/secrets/key"); a relative path
// against an absolute pattern, or one that climbs out of where it starts,
// is in doubt: where it lands depends on the agent's directory.
func globMayMatch(glob, p string) shell.Match {
	if p == "" {
		return shell.No
	}
	if strings.IndexByte(p, 0) >= 0 {
		return shell.Maybe
	}
	g := strings.ToLower(glob)
	q := path.Clean(strings.ToLower(strings.ReplaceAll(p, `\`, "/")))
	absGlob, absPath := strings.HasPrefix(g, "/"), strings.HasPrefix(q, "/")
	switch {
	case absGlob && !absPath:
		return shell.Maybe
	case !absGlob && absPath:
		g = "**/" + g
	}
	if ok, err := doublestar.Match(g, q); err != nil || ok {
		return shell.Yes
	}
	if !absPath && (q == ".." || strings.HasPrefix(q, "../")) {
		return shell.Maybe
	}
	return shell.No
}

// DecidingRule returns the rule among rules that decides the action in
// (asked at now), or nil when none does and a person decides. A deny rule
// that matches (see Matching above) beats every allow rule; a deny rule in
// doubt leaves the action to a person, whatever allow rules say; among
// rules of the same effect the oldest wins (then the smallest ID),
// whatever the order of rules.
func DecidingRule(rules []*Rule, in *Interaction, now time.Time) *Rule {
	if in == nil || in.Action == nil {
		return nil
	}
	d := newDecision(in, now)
	for _, r := range rules {
		d.consider(r)
	}
	return d.rule()
}

// decision is DecidingRule's reading of one action, rule by rule: the
// oldest deny that matches, whether a deny is in doubt, the oldest allow
// that matches.
type decision struct {
	in          *Interaction
	now         time.Time
	args, input *callArgs // the action's args, and its kind's input
	deny, allow *Rule
	doubt       bool
}

// newDecision starts the decision on in, an action, at now.
func newDecision(in *Interaction, now time.Time) *decision {
	return &decision{in: in, now: now, args: newCallArgs(in.Action.Args), input: newCallArgs(in.Action.Input)}
}

// callArgs returns what r reads: the action's args, or its kind's input
// for a rule on a kind.
func (d *decision) callArgs(r *Rule) *callArgs {
	if r.Kind != "" {
		return d.input
	}
	return d.args
}

// consider reads r, if it is in scope.
func (d *decision) consider(r *Rule) {
	if !r.inScope(d.in, d.now) {
		return
	}
	c := d.callArgs(r)
	if r.Effect == RuleDeny {
		switch r.Match.denies(c) {
		case shell.Yes:
			if d.deny == nil || older(r, d.deny) {
				d.deny = r
			}
		case shell.Maybe:
			d.doubt = true
		}
		return
	}
	if r.Match.allows(c) && (d.allow == nil || older(r, d.allow)) {
		d.allow = r
	}
}

// rule returns the deciding rule: a deny that matches, else none when a
// deny is in doubt, else the allow that matches, if any.
func (d *decision) rule() *Rule {
	switch {
	case d.deny != nil:
		return d.deny
	case d.doubt:
		return nil
	}
	return d.allow
}

// older reports whether r takes precedence over s, a rule of the same
// effect: the older, then the smaller ID.
func older(r, s *Rule) bool {
	if !r.CreatedAt.Equal(s.CreatedAt) {
		return r.CreatedAt.Before(s.CreatedAt)
	}
	return r.ID < s.ID
}
