package hitl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxSummaryLen is how many characters an action's summary keeps; a
// longer one is cut and ends in "…".
const MaxSummaryLen = 100

// Summary says in one line what an action will do, from the call itself:
// the command's first line, "Write config/prod.yaml (6 lines)", "Edit
// invoice.go (+4 −1)", "github · delete_repo: acme/site". It is what the
// inbox, Slack, email and Web Push show where they name the call.
func (a *Action) Summary() string {
	if a == nil {
		return ""
	}
	var in map[string]json.RawMessage
	_ = json.Unmarshal(a.Input, &in)
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(in[k], &s)
		return s
	}
	switch a.Kind {
	case KindShell:
		if c := str("command"); strings.TrimSpace(c) != "" {
			return commandSummary(c)
		}
	case KindFileWrite:
		n := lineCount(str("content"))
		return cutSummary(fmt.Sprintf("Write %s (%d %s)", oneLine(str("path")), n, plural(n, "line", "lines")))
	case KindFileEdit:
		add, del := editCounts(str("old"), str("new"))
		if d := str("diff"); d != "" {
			add, del = diffCounts(d)
		}
		return cutSummary(fmt.Sprintf("Edit %s (+%d −%d)", oneLine(str("path")), add, del))
	case KindFileRead:
		return cutSummary("Read " + oneLine(str("path")))
	case KindWebFetch:
		return cutSummary("Fetch " + oneLine(str("url")))
	case KindMCP:
		s := str("server") + " · " + str("tool")
		if arg := firstArgument(in["args"]); arg != "" {
			s += ": " + arg
		}
		return cutSummary(oneLine(s))
	}
	// Known by name only: a command, when the arguments carry one, or the
	// name and its first meaningful argument.
	var args map[string]json.RawMessage
	_ = json.Unmarshal(a.Args, &args)
	var c string
	if json.Unmarshal(args["command"], &c) == nil && strings.TrimSpace(c) != "" {
		return commandSummary(c)
	}
	if arg := firstArgument(a.Args); arg != "" {
		return cutSummary(oneLine(a.Name + ": " + arg))
	}
	return cutSummary(oneLine(a.Name))
}

// DefaultQuestion is the question an action gets when its agent gave
// none.
func (a *Action) DefaultQuestion() string { return "Run " + a.Name + "?" }

// Headline is what to call an interaction where one line names it: the
// agent's own question, or an action's summary when the agent asked
// nothing of its own ("Run Bash?" says nothing a reviewer can judge).
func (in *Interaction) Headline() string {
	if in.Type == TypeAction && in.Action != nil && in.Question == in.Action.DefaultQuestion() {
		if s := in.Action.Summary(); s != "" {
			return s
		}
	}
	return in.Question
}

// Subline is the action's summary when the headline is the agent's own
// question, to be shown beneath it; "" otherwise.
func (in *Interaction) Subline() string {
	if in.Type != TypeAction || in.Action == nil {
		return ""
	}
	if s := in.Action.Summary(); s != in.Headline() {
		return s
	}
	return ""
}

// commandSummary is a command's first non-blank line, cut, with "…" when
// lines follow.
func commandSummary(c string) string {
	lines := strings.Split(strings.TrimSpace(c), "\n")
	first := strings.Join(strings.Fields(lines[0]), " ")
	if len(lines) > 1 {
		return cutSummary(first + " …")
	}
	return cutSummary(first)
}

// firstArgument is the first non-empty string, number or boolean among an
// object's fields, in the agent's order: what a call is about.
func firstArgument(raw json.RawMessage) string {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for d.More() {
		if _, err := d.Token(); err != nil {
			return ""
		}
		var v any
		if err := d.Decode(&v); err != nil {
			return ""
		}
		switch v := v.(type) {
		case string:
			if s := strings.TrimSpace(v); s != "" {
				return oneLine(s)
			}
		case json.Number:
			return v.String()
		case bool:
			return fmt.Sprint(v)
		}
	}
	return ""
}

// editCounts counts the lines an edit adds and removes, past the lines
// old and new share at their start and end.
func editCounts(old, new string) (add, del int) {
	o, n := splitLines(old), splitLines(new)
	for len(o) > 0 && len(n) > 0 && o[0] == n[0] {
		o, n = o[1:], n[1:]
	}
	for len(o) > 0 && len(n) > 0 && o[len(o)-1] == n[len(n)-1] {
		o, n = o[:len(o)-1], n[:len(n)-1]
	}
	return len(n), len(o)
}

// diffCounts counts a unified diff's added and removed lines.
func diffCounts(d string) (add, del int) {
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return add, del
}

// splitLines splits text into lines; "" has none, and a final newline
// ends the last line rather than starting another.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// lineCount is how many lines text has.
func lineCount(s string) int { return len(splitLines(s)) }

// oneLine joins s's lines and runs of space into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutSummary keeps the first MaxSummaryLen characters of s, ending in "…" when
// it cut.
func cutSummary(s string) string {
	if utf8.RuneCountInString(s) <= MaxSummaryLen {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:MaxSummaryLen-1]), " ") + "…"
}

// plural picks the word for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
