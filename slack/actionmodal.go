package slack

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
)

// The modals that answer an action: Reject (a reason, required when the
// agent says so), Respond (a reply instead of the action running), Edit
// (one input per argument when args_schema maps to Slack inputs, else the
// arguments as JSON, checked on submit) and Always allow (the rule's
// scope, pattern and expiry, confirmed). Each submission is an answer
// through the engine, which validates it; what it refuses is shown in the
// modal, on the input it is about.

// keyAlways is the option key of the Always allow button's token.
const keyAlways = "always"

// Block IDs of the action modals.
const (
	blockMessage = "message"
	blockArgs    = "args"
	blockScope   = "scope"
	blockPattern = "pattern"
	blockExpiry  = "expiry"
	// blockConfirmRisky is the Always allow modal's box to tick for an
	// action marked risky.
	blockConfirmRisky = "confirm_risky"
)

// maxInput is the most a Slack text input holds.
const maxInput = 3000

// expiries are the Always allow modal's choices of how long a rule lasts,
// in seconds (0: until revoked), the first the default.
var expiries = []struct{ seconds, text string }{
	{"0", "Never (until revoked)"},
	{"3600", "1 hour"},
	{"86400", "1 day"},
	{"604800", "7 days"},
	{"2592000", "30 days"},
}

// editView is how the Edit modal edits an action's arguments.
type editView struct {
	fields []field // from args_schema; nil for the JSON editor
	json   string  // the arguments as indented JSON, for the JSON editor
}

// editForm returns how Slack edits in's arguments: with fields when
// args_schema maps to inputs that can show every argument they cover, or
// as JSON when that fits in a text input; false when neither does (edit
// in the web inbox).
func editForm(in *hitl.Interaction) (editView, bool) {
	var args map[string]json.RawMessage
	_ = json.Unmarshal(in.Action.Args, &args)
	if len(in.ArgsSchema) > 0 {
		if fields, ok := formFields(in.ArgsSchema); ok && fieldsShow(fields, args) {
			return editView{fields: fields}, true
		}
	}
	var b bytes.Buffer
	if json.Indent(&b, in.Action.Args, "", "  ") != nil || utf8.RuneCount(b.Bytes()) > maxInput {
		return editView{}, false
	}
	return editView{json: b.String()}, true
}

// fieldsShow reports whether each argument a field covers can be shown in
// it: of the field's type, and short enough.
func fieldsShow(fields []field, args map[string]json.RawMessage) bool {
	for _, f := range fields {
		raw, ok := args[f.name]
		if !ok {
			continue
		}
		var s string
		var n float64
		var b bool
		switch f.kind {
		case fieldText, fieldDate:
			limit := maxInput
			if f.maxLength > 0 && f.maxLength < limit {
				limit = f.maxLength // the input's own limit (Slack refuses a longer initial value)
			}
			ok = json.Unmarshal(raw, &s) == nil && utf8.RuneCountInString(s) <= limit
		case fieldNumber, fieldInteger:
			ok = json.Unmarshal(raw, &n) == nil && within(n, f.min, f.max)
		case fieldBool:
			ok = json.Unmarshal(raw, &b) == nil
		case fieldSelect:
			ok = false
			for _, v := range f.enum {
				ok = ok || jsonEqual(raw, v)
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// within reports whether n is within the bounds lo and hi (JSON numbers,
// "" for none).
func within(n float64, lo, hi string) bool {
	if l, err := strconv.ParseFloat(lo, 64); err == nil && n < l {
		return false
	}
	if h, err := strconv.ParseFloat(hi, 64); err == nil && n > h {
		return false
	}
	return true
}

// actionModal returns the modal the button with key opens on the action
// in, carrying token; false when there is none (an edit Slack cannot
// show).
func actionModal(in *hitl.Interaction, key, token string) (slack.ModalViewRequest, bool) {
	v := slack.ModalViewRequest{
		Type: slack.VTModal, CallbackID: callbackAnswer, PrivateMetadata: token,
		Close: plain("Cancel", 24),
	}
	head := modalHead(in)
	switch key {
	case string(hitl.DecisionReject):
		v.Title, v.Submit = plain("Reject", 24), plain("Reject", 24)
		hint := "Optional. The agent reads it."
		if in.RejectRequiresMessage {
			hint = "Required. The agent reads it."
		}
		input := textInput(blockMessage, "Why not?", hint, "", !in.RejectRequiresMessage)
		v.Blocks.BlockSet = append(head, input)
	case string(hitl.DecisionRespond):
		v.Title, v.Submit = plain("Respond", 24), plain("Send", 24)
		input := textInput(blockMessage, "Your answer", "The action does not run; the agent reads this instead.", "", false)
		v.Blocks.BlockSet = append(head, input)
	case string(hitl.DecisionEdit):
		ev, ok := editForm(in)
		if !ok {
			return v, false
		}
		v.Title, v.Submit = plain("Edit", 24), plain("Approve edited", 24)
		v.Blocks.BlockSet = append(head[:1], editInputs(in, ev)...)
	case keyAlways:
		v.Title, v.Submit = plain("Always allow", 24), plain("Approve and allow", 24)
		v.Blocks.BlockSet = append(head, alwaysInputs(in)...)
	default:
		return v, false
	}
	return v, true
}

// modalHead is what a modal on an action starts with: the question, the
// action and its agent, and its command or diff.
func modalHead(in *hitl.Interaction) []slack.Block {
	text := truncateMrkdwn(in.Headline(), 1500) + "\n*" + escapeMax(in.Action.Name, 300) + "*"
	if in.SourceAgent != "" {
		text += " from 🤖 " + escapeMax(in.SourceAgent, 300)
	}
	blocks := []slack.Block{slack.NewSectionBlock(verbatim(text), nil, nil)}
	if v := viewArgs(in.Action); v.hasCode {
		code, more := clip(v.code)
		if more > 0 {
			code += "\n…and " + strconv.Itoa(more) + " more " + plural(more, "line")
		}
		blocks = append(blocks, codeBlock(code))
	}
	return blocks
}

// textInput is a multi-line text input block.
func textInput(block, label, hint, initial string, optional bool) *slack.InputBlock {
	el := slack.NewPlainTextInputBlockElement(nil, valueAction)
	el.Multiline, el.MaxLength, el.InitialValue = true, maxInput, initial
	b := slack.NewInputBlock(block, plain(label, 2000), plain(hint, 2000), el)
	b.Optional = optional
	return b
}

// editInputs are the Edit modal's inputs: a field per argument of
// args_schema, with the proposed values, or the arguments as JSON.
func editInputs(in *hitl.Interaction, ev editView) []slack.Block {
	if ev.fields == nil {
		return []slack.Block{textInput(blockArgs, "Arguments (JSON)", "A JSON object: the arguments the action runs with.", ev.json, false)}
	}
	names, args, _ := orderedObject(in.Action.Args)
	var blocks []slack.Block
	covered := map[string]bool{}
	for i, f := range ev.fields {
		blocks = append(blocks, f.input(i, args[f.name]))
		covered[f.name] = true
	}
	var kept []string
	for _, k := range names {
		if !covered[k] {
			kept = append(kept, codeSpan(k))
		}
	}
	if len(kept) > 0 {
		blocks = append(blocks, contextBlock("Kept as proposed: "+truncate(strings.Join(kept, ", "), 1000)))
	}
	return blocks
}

// alwaysInputs are the Always allow modal's inputs: what the rule
// matches, the pattern to confirm, and how long it lasts.
func alwaysInputs(in *hitl.Interaction) []slack.Block {
	scopes, label := ruleScopes(in)
	opts := make([]*slack.OptionBlockObject, len(scopes))
	for i, sc := range scopes {
		opts[i] = slack.NewOptionBlockObject(sc.value, literal(truncate(sc.text, maxOptionText)), nil)
	}
	radio := slack.NewRadioButtonsBlockElement(valueAction, opts...)
	radio.InitialOption = opts[0]
	text := "Approve this call, and from now on approve calls of *" + escapeMax(in.Action.Name, 300) + "* from *" +
		escapeMax(in.SourceAgent, 300) + "* without asking anyone, when they match:"
	blocks := []slack.Block{
		slack.NewSectionBlock(verbatim(text), nil, nil),
		slack.NewInputBlock(blockScope, plain("Scope", 2000), nil, radio),
	}
	if label != "" {
		el := slack.NewPlainTextInputBlockElement(nil, valueAction)
		el.InitialValue, el.MaxLength = scopes[0].pattern(), hitl.MaxRuleGlobLen
		hint := "A doublestar glob, such as src/** (** crosses directories). A path with .. never matches."
		if scopes[0].match.Prefix != "" {
			hint = "Matches this command, or it followed by any further arguments (--output=FILE or -c key=value too); never one holding ; & | ` $ > < * or a line break."
		}
		b := slack.NewInputBlock(blockPattern, plain(label, 2000), plain(hint, 2000), el)
		b.Optional = true
		blocks = append(blocks, b)
	}
	eopts := make([]*slack.OptionBlockObject, len(expiries))
	for i, e := range expiries {
		eopts[i] = slack.NewOptionBlockObject(e.seconds, plain(e.text, maxOptionText), nil)
	}
	sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Until…", maxOptionText), valueAction, eopts...)
	sel.InitialOption = eopts[0]
	blocks = append(blocks, slack.NewInputBlock(blockExpiry, plain("Expires", 2000), nil, sel))
	if in.Action.Risky() {
		// A rule for a risky call is made only once the person ticks this
		// (Slack requires it; the submission is checked again).
		box := slack.NewCheckboxGroupsBlockElement(valueAction,
			slack.NewOptionBlockObject(confirmRiskyValue, plain("I understand, and allow calls like it", maxOptionText), nil))
		blocks = append(blocks, slack.NewInputBlock(blockConfirmRisky, plain("Marked risky: "+riskText(in.Action), 2000),
			plain("The rule lets calls like this one run without asking anyone.", 2000), box))
	}
	return append(blocks, contextBlock("Rules are listed, and revoked, in the web inbox and with `hitl rule`."))
}

// confirmRiskyValue is the value of the Always allow modal's risk box.
const confirmRiskyValue = "confirmed"

// riskText joins the reasons an action is marked risky.
func riskText(a *hitl.Action) string {
	whys := make([]string, len(a.Risks))
	for i, r := range a.Risks {
		whys[i] = r.Why
	}
	return strings.Join(whys, "; ")
}

// pattern is a pattern scope's prefix or glob.
func (sc scope) pattern() string {
	if sc.match == nil {
		return ""
	}
	return sc.match.Prefix + sc.match.Glob
}
