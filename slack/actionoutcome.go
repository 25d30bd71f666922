package slack

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
)

// How an action ended, for the message that replaces its card: who
// decided what, on which channel, with the reason of a rejection or the
// reply given instead (they are not secrets), an edit as the difference
// from the proposed arguments, and the rule an answer made.

const (
	// maxReason is how much of a reason or reply the outcome shows,
	// escaped, and of an edit's summary.
	maxReason = 1000
	// maxInlineEdit is the longest value an edit's summary shows inline.
	maxInlineEdit = 100
	// maxRulePages bounds the pages of rules read to find the one an
	// answer made.
	maxRulePages = 10
)

// actionValue is an action's recorded answer.
type actionValue struct {
	Decision hitl.Decision `json:"decision"`
	Message  string        `json:"message"`
}

// patchOp is one operation of an edit's RFC 6902 patch.
type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

// actionOutcome says how the action in was answered, in mrkdwn; by is
// "by … via … at …".
func actionOutcome(in *hitl.Interaction, by string) string {
	r := in.Result
	var v actionValue
	_ = json.Unmarshal(r.Value, &v)
	if r.RuleID != "" || r.Channel == hitl.ChannelRule {
		if v.Decision == hitl.DecisionApprove {
			return "✅ Allowed by rule " + codeSpan(r.RuleID)
		}
		return "🚫 Denied by rule " + codeSpan(r.RuleID) + reason(v.Message)
	}
	switch v.Decision {
	case hitl.DecisionApprove:
		return "✅ Approved " + by
	case hitl.DecisionEdit:
		return "✏️ Edited and approved " + by + editSummary(r.ArgsDiff)
	case hitl.DecisionReject:
		return "❌ Rejected " + by + reason(v.Message)
	}
	return "💬 Answered instead " + by + reason(v.Message)
}

// decisionPhrase says what an action's answer decided, in a few words,
// for the default answer of an expired action.
func decisionPhrase(in *hitl.Interaction) string {
	var v actionValue
	_ = json.Unmarshal(in.Result.Value, &v)
	switch v.Decision {
	case hitl.DecisionApprove:
		return "approved"
	case hitl.DecisionEdit:
		return "edited and approved" + editSummary(in.Result.ArgsDiff)
	case hitl.DecisionReject:
		return "rejected" + reason(v.Message)
	}
	return "answered instead" + reason(v.Message)
}

// actionPlain is how an action ended, in a notification's words.
func actionPlain(in *hitl.Interaction) string {
	var v actionValue
	_ = json.Unmarshal(in.Result.Value, &v)
	switch v.Decision {
	case hitl.DecisionApprove:
		return "approved"
	case hitl.DecisionEdit:
		return "edited and approved"
	case hitl.DecisionReject:
		return "rejected"
	}
	return "answered instead"
}

// reason is ": " and a reason or reply, escaped, or "".
func reason(msg string) string {
	if msg = strings.TrimSpace(msg); msg == "" {
		return ""
	}
	return ": " + escapeMax(msg, maxReason)
}

// editSummary is ": " and what an edit changed, when every change is
// short enough to say inline ("command → `terraform plan`"); "" when not
// (the diff block shows it).
func editSummary(diff json.RawMessage) string {
	var ops []patchOp
	if json.Unmarshal(diff, &ops) != nil || len(ops) == 0 {
		return ""
	}
	parts := make([]string, len(ops))
	for i, op := range ops {
		name := escapeMax(pointerName(op.Path), 200)
		if op.Op == "remove" {
			parts[i] = name + " removed"
			continue
		}
		text := argText(op.Value)
		if len([]rune(text)) > maxInlineEdit || strings.ContainsAny(text, "`\n") || text == "" {
			return ""
		}
		parts[i] = name + " → " + codeSpan(text)
	}
	if sum := strings.Join(parts, ", "); len([]rune(sum)) <= maxReason {
		return ": " + sum
	}
	return ""
}

// editDiff returns the block showing an edit as a diff from the proposed
// arguments, and the note on lines left out; nil when in is no edit.
func (s *Service) editDiff(in *hitl.Interaction) []slack.Block {
	var ops []patchOp
	if in.Result == nil || json.Unmarshal(in.Result.ArgsDiff, &ops) != nil || len(ops) == 0 {
		return nil
	}
	var proposed any
	_ = json.Unmarshal(in.Action.Args, &proposed)
	var lines []string
	for _, op := range ops {
		lines = append(lines, pointerName(op.Path))
		old, had := lookup(proposed, op.Path)
		switch {
		case op.Op == "remove":
			lines = append(lines, prefixed("-", valueText(old))...)
		case had && isString(old) && isString(op.Value):
			var a, b string
			_ = json.Unmarshal(old, &a)
			_ = json.Unmarshal(op.Value, &b)
			lines = append(lines, lineDiff(a, b)...)
		default:
			if had {
				lines = append(lines, prefixed("-", valueText(old))...)
			}
			lines = append(lines, prefixed("+", valueText(op.Value))...)
		}
	}
	text, more := clip(strings.Join(lines, "\n"))
	blocks := []slack.Block{codeBlock(text)}
	if more > 0 {
		blocks = append(blocks, contextBlock("…and "+strconv.Itoa(more)+" more "+plural(more, "line")+" — "+s.openLink(in)))
	}
	return blocks
}

// pointerName shows a JSON Pointer as an argument's name: "/command" is
// "command", "/env/HOME" is "env/HOME" (~1 and ~0 decoded).
func pointerName(p string) string {
	p = strings.TrimPrefix(p, "/")
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(p)
}

// lookup returns the value at the JSON Pointer p in v, as JSON.
func lookup(v any, p string) (json.RawMessage, bool) {
	if p == "" {
		return nil, false
	}
	for _, tok := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	b, err := json.Marshal(v)
	return b, err == nil
}

// isString reports whether raw is a JSON string.
func isString(raw json.RawMessage) bool {
	return len(raw) > 0 && raw[0] == '"'
}

// valueText shows a value for a diff: a string as its text, anything else
// as JSON.
func valueText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// prefixed returns the lines of text, each after p.
func prefixed(p, text string) []string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = p + l
	}
	return lines
}

// madeRule returns the rule a person's answer to the action in made
// ("always"), or nil.
func (s *Service) madeRule(ctx context.Context, in *hitl.Interaction) *hitl.Rule {
	r := in.Result
	if in.Type != hitl.TypeAction || in.Status != hitl.StatusAnswered || r == nil || r.RuleID != "" || r.TimedOut || r.RespondedBy == "" {
		return nil
	}
	f := hitl.RuleFilter{CreatedBy: r.RespondedBy, SourceAgent: in.SourceAgent, ActionName: in.Action.Name, Limit: hitl.MaxListLimit}
	for range maxRulePages {
		rules, next, err := s.b.Rules(asChannel(ctx), f)
		if err != nil {
			s.log.Warn("look for the rule an answer made", "interaction_id", in.ID, "error", err)
			return nil
		}
		for _, rule := range rules {
			if rule.InteractionID == in.ID {
				return rule
			}
		}
		if next == "" {
			return nil
		}
		f.Cursor = next
	}
	return nil
}

// ruleLine says what the rule an answer made does from now on.
func ruleLine(r *hitl.Rule) string {
	what := "allowed"
	if r.Effect == hitl.RuleDeny {
		what = "denied"
	}
	text := "🔁 From now on " + what + " without asking: " + describeRule(r) + " (rule " + codeSpan(r.ID)
	if r.ExpiresAt != nil {
		text += ", until " + slackDate(*r.ExpiresAt)
	}
	return text + ")"
}
