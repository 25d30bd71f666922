// Package risk marks the actions a reviewer should look at twice: a
// command run as root, a recursive delete, a download piped into a
// shell, a force push, SQL that drops or changes every row, infrastructure
// applied or destroyed, anything naming production, a write outside the
// project, an MCP tool its server calls destructive; and whatever the
// server's own patterns name. Each mark says why. The engine marks an
// action once, when it is created; every channel shows the same marks.
package risk

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/hitl-sh/hitl"
)

// Pattern is a server-configured risk: a regular expression matched
// against an action's command (or, for other calls, its arguments), and
// why a match is risky.
type Pattern struct {
	re  *regexp.Regexp
	why string
}

// ParsePattern reads "REGEXP" or "REGEXP => why", such as
// `pulumi (up|destroy) => changes cloud infrastructure`. The match is
// case-insensitive; without a why, the mark says which pattern matched.
func ParsePattern(s string) (Pattern, error) {
	expr, why := s, ""
	if i := strings.LastIndex(s, " => "); i >= 0 {
		expr, why = s[:i], strings.TrimSpace(s[i+4:])
	}
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return Pattern{}, fmt.Errorf("risk pattern %q has no expression", s)
	}
	re, err := regexp.Compile("(?i)" + expr)
	if err != nil {
		return Pattern{}, fmt.Errorf("risk pattern %q: %w", s, err)
	}
	if why == "" {
		why = "matches the risk pattern " + expr
	}
	return Pattern{re: re, why: why}, nil
}

// Assessor marks risky actions by the built-in checks and its patterns.
// The zero value uses the built-in checks alone.
type Assessor struct {
	patterns []Pattern
}

// New returns an Assessor with the server's own patterns besides the
// built-in checks.
func New(patterns []Pattern) *Assessor {
	return &Assessor{patterns: append([]Pattern(nil), patterns...)}
}

// Marks returns why the action in asks about is risky, each reason once,
// in the order found; nil when it is not (or in is not an action).
func (a *Assessor) Marks(in *hitl.Interaction) []hitl.Risk {
	if in == nil || in.Action == nil {
		return nil
	}
	act := in.Action
	input := object(act.Input)
	args := object(act.Args)
	var why []string
	command := text(input["command"])
	if command == "" && act.Kind == "" {
		command = text(args["command"])
	}
	if command != "" {
		why = append(why, shellRisks(command)...)
		why = append(why, sqlRisks(command)...)
		if namesProduction(command) {
			why = append(why, "names production")
		}
	} else {
		for _, s := range append(stringsIn(act.Args), stringsIn(act.Input)...) {
			why = append(why, sqlRisks(s)...)
			if namesProduction(s) {
				why = append(why, "names production")
			}
		}
	}
	if act.Kind == hitl.KindFileWrite || act.Kind == hitl.KindFileEdit {
		if p, project := text(input["path"]), projectDir(in, input); outside(p, project) {
			why = append(why, "writes outside the project ("+project+")")
		}
	}
	if destructive(in) {
		why = append(why, "the tool's server marks it destructive")
	}
	subject := command
	if subject == "" {
		subject = string(act.Args) + " " + string(act.Input)
	}
	for _, p := range a.patterns {
		if p.re.MatchString(subject) {
			why = append(why, p.why)
		}
	}
	return unique(why)
}

// Mark sets the risk marks of the action in asks about.
func (a *Assessor) Mark(in *hitl.Interaction) {
	if in != nil && in.Action != nil {
		in.Action.Risks = a.Marks(in)
	}
}

// productionName matches prod or production as a word of its own:
// "--context prod-eu", "prod.tfvars", "production", not "products".
var productionName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(^|[^a-z0-9])(prod|production)([^a-z0-9]|$)`) })

// namesProduction reports whether s names production.
func namesProduction(s string) bool { return productionName().MatchString(s) }

// projectDir is the directory the agent works in: the shell input's cwd,
// or the cwd or project in the interaction's metadata; "" when unknown.
func projectDir(in *hitl.Interaction, input map[string]json.RawMessage) string {
	if c := text(input["cwd"]); c != "" {
		return c
	}
	for _, k := range []string{"project", "cwd"} {
		if s, ok := in.Metadata[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// outside reports whether the file p lies outside the directory project
// (both known; a relative p is read from project).
func outside(p, project string) bool {
	if p == "" || project == "" || !path.IsAbs(project) {
		return false
	}
	if !path.IsAbs(p) {
		p = path.Join(project, p)
	}
	p, project = path.Clean(p), path.Clean(project)
	return p != project && !strings.HasPrefix(p, strings.TrimSuffix(project, "/")+"/")
}

// destructive reports whether the call's MCP tool annotations, as the
// agent passed them in the metadata ("annotations":
// {"destructiveHint": true}), call the tool destructive.
func destructive(in *hitl.Interaction) bool {
	ann, _ := in.Metadata["annotations"].(map[string]any)
	d, _ := ann["destructiveHint"].(bool)
	return d
}

// object decodes a JSON object; nil when raw is not one.
func object(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m
}

// text decodes a JSON string; "" when raw is not one.
func text(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// stringsIn returns every string in a JSON value, however deep.
func stringsIn(raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(v[k])
			}
		}
	}
	walk(v)
	return out
}

// unique keeps the first of each reason.
func unique(why []string) []hitl.Risk {
	var out []hitl.Risk
	seen := map[string]bool{}
	for _, w := range why {
		if !seen[w] {
			seen[w] = true
			out = append(out, hitl.Risk{Why: w})
		}
	}
	return out
}
