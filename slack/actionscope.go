package slack

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/hitl-sh/hitl"
)

// What an "always allow" rule matches, as the Always allow modal offers
// it: the same suggestions as the web inbox (a Bash command's first two
// words as a prefix, a written file's directory as a glob, which the
// person may change; the exact argument when those cannot match the call,
// as with shell control syntax or ".."; every call of any other action),
// and for other actions, after every call, a few of their arguments as
// exact matches to narrow it. Every suggestion is checked to match the
// call it is made from.

// Values of the scope options.
const (
	scopePattern = "pattern" // the prefix or glob in the pattern input
	scopeAny     = "any"     // every call
	scopeEquals  = "eq"      // followed by the index of an argument
)

const (
	// maxEqualsScopes bounds the exact-argument scopes offered for an
	// action without a suggestion of its own.
	maxEqualsScopes = 4
	// maxEqualsLen bounds the JSON of an argument offered as an exact
	// match.
	maxEqualsLen = 200
)

// scope is one choice of what an "always allow" rule matches.
type scope struct {
	value string          // the option's value
	text  string          // what the option says
	match *hitl.RuleMatch // nil: every call; for scopePattern, the suggestion
}

// ruleScopes returns the scopes the Always allow modal offers for in, the
// suggested one first, and the label of the pattern input when the first
// is a prefix or glob to confirm.
func ruleScopes(in *hitl.Interaction) ([]scope, string) {
	a := in.Action
	names, values, _ := orderedObject(a.Args)
	str := func(k string) (string, bool) {
		var s string
		raw, ok := values[k]
		return s, ok && json.Unmarshal(raw, &s) == nil
	}
	exact := func(arg, text string) scope {
		return scope{value: scopeEquals + arg, text: text, match: &hitl.RuleMatch{Arg: arg, Equals: values[arg]}}
	}
	every := scope{value: scopeAny, text: truncate("Every "+a.Name+" call from "+in.SourceAgent, maxOptionText)}
	var out []scope
	label := ""
	switch a.Name {
	case nameBash:
		cmd, ok := str("command")
		if !ok {
			break
		}
		m := &hitl.RuleMatch{Arg: "command", Prefix: commandPrefix(cmd)}
		if m.Prefix != "" && m.Matches(a.Args) {
			out, label = append(out, scope{value: scopePattern, text: "Commands starting with the prefix below", match: m}), "Command prefix"
		} else {
			out = append(out, exact("command", "Only this exact command"))
		}
		every.text = "Any Bash command from " + truncate(in.SourceAgent, 50)
	case nameWrite, nameEdit, nameMultiEdit:
		p, ok := str("file_path")
		if !ok {
			break
		}
		m := &hitl.RuleMatch{Arg: "file_path", Glob: dirGlob(p)}
		if m.Glob != "" && m.Matches(a.Args) {
			out, label = append(out, scope{value: scopePattern, text: "Files matching the pattern below", match: m}), "Path pattern"
		} else {
			out = append(out, exact("file_path", "Only this exact file"))
		}
		every.text = "Any file, for " + truncate(a.Name, 50)
	}
	if len(out) > 0 {
		return append(out, every), label
	}
	out = append(out, every)
	for _, k := range names {
		if len(out) > maxEqualsScopes {
			break
		}
		if raw := values[k]; len(raw) <= maxEqualsLen && len(raw) > 0 && raw[0] != '{' && raw[0] != '[' && string(raw) != "null" {
			out = append(out, exact(k, truncate("Only when "+k+" is "+argText(raw), maxOptionText)))
		}
	}
	return out, ""
}

// commandPrefix returns the first two words of a shell command, as
// written, or "" when it starts with white space.
func commandPrefix(cmd string) string {
	if cmd == "" || cmd != strings.TrimLeft(cmd, " \t") {
		return ""
	}
	words := 0
	inWord := false
	for i, r := range cmd {
		space := r == ' ' || r == '\t' || r == '\n'
		switch {
		case !space && !inWord:
			inWord = true
			words++
		case space && inWord:
			inWord = false
			if words == 2 {
				return cmd[:i]
			}
		}
	}
	return strings.TrimRight(cmd, " \t\n")
}

// dirGlob returns the glob of every file below the directory of p, its
// special characters escaped: "<dir>/**", "**" for a file without one.
// Unlike the web inbox, it cleans p first ("./src/a.go" is in "src/**"),
// as the server does before matching.
func dirGlob(p string) string {
	dir := path.Dir(path.Clean(p))
	switch dir {
	case ".":
		return "**"
	case "/":
		return "/**"
	}
	esc := strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`, "{", `\{`, "}", `\}`).Replace(dir)
	return esc + "/**"
}

// withPattern returns the match of a pattern scope with the person's
// pattern in place of the suggested one.
func (sc scope) withPattern(p string) *hitl.RuleMatch {
	m := *sc.match
	if m.Prefix != "" {
		m.Prefix = p
	} else {
		m.Glob = p
	}
	return &m
}

// maxCodeSpan bounds an inline code span, escaped.
const maxCodeSpan = 500

// codeSpan shows s as inline code in mrkdwn, or escaped as it is when it
// holds what would end the span.
func codeSpan(s string) string {
	if s == "" || strings.ContainsAny(s, "`\n") {
		return escapeMax(s, maxCodeSpan)
	}
	return "`" + escapeMax(s, maxCodeSpan) + "`"
}

// describeRule says in mrkdwn what r matches, for the action name.
func describeRule(r *hitl.Rule) string {
	m := r.Match
	switch {
	case m == nil:
		return "every " + escapeMax(r.ActionName, 300) + " call"
	case m.Prefix != "":
		return codeSpan(m.Arg) + " starting with " + codeSpan(m.Prefix)
	case m.Glob != "":
		return codeSpan(m.Arg) + " matching " + codeSpan(m.Glob)
	}
	return codeSpan(m.Arg) + " equal to " + codeSpan(truncate(argText(m.Equals), maxArgValue))
}
