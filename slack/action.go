package slack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
)

// The card of an action: its name and agent, and its arguments as they
// will run. A Bash command is shown as code; a Write, Edit or MultiEdit
// as a diff of the file; every other argument as a field, its name in
// bold and its value as plain text (which Slack shows as it is). Buttons
// follow the decisions the agent allows: Approve at once; Edit, Reject,
// Respond and Always allow open a modal (actionmodal.go).

const (
	// maxArgPairs is how many arguments a section shows (Slack allows ten
	// fields: a name and a value each).
	maxArgPairs = 5
	// maxArgSections bounds the sections of arguments in a card.
	maxArgSections = 4
	// maxArgValue is how much of a value a field shows.
	maxArgValue = 300
	// maxDescription is how much of an action's description a card
	// shows, escaped.
	maxDescription = 2000
)

// Action names whose arguments are shown as code (Claude Code's tools, as
// the web inbox knows them).
const (
	nameBash      = "Bash"
	nameWrite     = "Write"
	nameEdit      = "Edit"
	nameMultiEdit = "MultiEdit"
)

// argsView is how a card shows an action's arguments.
type argsView struct {
	code     string          // a command or a diff; "" for none
	hasCode  bool            // code is shown (it may be empty)
	codeArgs map[string]bool // the arguments the code shows
	names    []string        // every argument, in the agent's order
	values   map[string]json.RawMessage
}

// viewArgs works out how to show a's arguments.
func viewArgs(a *hitl.Action) argsView {
	v := argsView{codeArgs: map[string]bool{}}
	v.names, v.values, _ = orderedObject(a.Args)
	str := func(k string) (string, bool) {
		var s string
		raw, ok := v.values[k]
		return s, ok && json.Unmarshal(raw, &s) == nil
	}
	code := func(text string, args ...string) {
		v.code, v.hasCode = text, true
		for _, k := range args {
			v.codeArgs[k] = true
		}
	}
	switch a.Name {
	case nameBash:
		if cmd, ok := str("command"); ok {
			code(cmd, "command")
		}
	case nameWrite:
		if text, ok := str("content"); ok {
			code(strings.Join(added(text), "\n"), "content")
		}
	case nameEdit:
		old, ok1 := str("old_string")
		new, ok2 := str("new_string")
		if ok1 && ok2 {
			code(strings.Join(lineDiff(old, new), "\n"), "old_string", "new_string")
		}
	case nameMultiEdit:
		if d, ok := multiEditDiff(v.values["edits"]); ok {
			code(d, "edits")
		}
	}
	return v
}

// multiEditDiff is the diff of a MultiEdit's edits, one after the other.
func multiEditDiff(raw json.RawMessage) (string, bool) {
	var edits []struct {
		Old *string `json:"old_string"`
		New *string `json:"new_string"`
	}
	if json.Unmarshal(raw, &edits) != nil || len(edits) == 0 {
		return "", false
	}
	var lines []string
	for i, e := range edits {
		if e.Old == nil || e.New == nil {
			return "", false
		}
		if len(edits) > 1 {
			lines = append(lines, fmt.Sprintf("@@ edit %d of %d @@", i+1, len(edits)))
		}
		lines = append(lines, lineDiff(*e.Old, *e.New)...)
	}
	return strings.Join(lines, "\n"), true
}

// argText shows an argument's value: a string as itself, anything else
// (and a string of white space only) as JSON.
func argText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) != "" {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// verbatim is mrkdwn that Slack does not add links or mentions to.
func verbatim(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, true)
}

// literal is plain text Slack shows as it is (no emoji either).
func literal(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
}

// actionBlocks shows the action of in: its name, agent and description,
// its arguments, and a note with the link when some are cut short.
func (s *Service) actionBlocks(in *hitl.Interaction) []slack.Block {
	a := in.Action
	head := "*" + escapeMax(a.Name, 300) + "*"
	if a.Kind != "" {
		head += "  ·  " + escape(hitl.KindTitle(a.Kind))
	}
	if in.SourceAgent != "" {
		head += "  ·  🤖 " + escapeMax(in.SourceAgent, 300)
	}
	if d := strings.TrimSpace(a.Description); d != "" {
		head += "\n" + escapeMax(d, maxDescription)
	}
	blocks := []slack.Block{slack.NewSectionBlock(verbatim(head), nil, nil)}

	v := viewArgs(a)
	moreLines := 0
	var codeBlocks []slack.Block
	if v.hasCode {
		text, more := clip(v.code)
		if text == "" {
			text = "(empty)"
		}
		codeBlocks, moreLines = []slack.Block{codeBlock(text)}, more
	}
	fields, moreArgs, folded := argFields(v)
	if a.Name == nameBash {
		blocks = append(append(blocks, codeBlocks...), fields...)
	} else {
		blocks = append(append(blocks, fields...), codeBlocks...)
	}
	var notes []string
	if moreLines > 0 {
		notes = append(notes, fmt.Sprintf("…and %d more %s", moreLines, plural(moreLines, "line")))
	}
	if moreArgs > 0 {
		notes = append(notes, fmt.Sprintf("…and %d more %s", moreArgs, plural(moreArgs, "argument")))
	}
	if folded {
		notes = append(notes, "long values are cut short")
	}
	if len(notes) > 0 {
		blocks = append(blocks, contextBlock(strings.Join(notes, "; ")+" — "+s.openLink(in)))
	}
	return blocks
}

// argFields returns the sections showing the arguments the code does not,
// as name and value fields; how many did not fit; and whether a value was
// cut short.
func argFields(v argsView) ([]slack.Block, int, bool) {
	var blocks []slack.Block
	var fields []*slack.TextBlockObject
	folded, shown, more := false, 0, 0
	for _, k := range v.names {
		if v.codeArgs[k] {
			continue
		}
		if shown == maxArgPairs*maxArgSections {
			more++
			continue
		}
		text := argText(v.values[k])
		if len([]rune(text)) > maxArgValue {
			text, folded = truncate(text, maxArgValue), true
		}
		fields = append(fields, verbatim("*"+escapeMax(k, 500)+"*"), literal(text))
		shown++
		if len(fields) == 2*maxArgPairs {
			blocks = append(blocks, slack.NewSectionBlock(nil, fields, nil))
			fields = nil
		}
	}
	if len(fields) > 0 {
		blocks = append(blocks, slack.NewSectionBlock(nil, fields, nil))
	}
	return blocks, more, folded
}

// openLink is "open in hitl", linked to in when the public URL is known.
func (s *Service) openLink(in *hitl.Interaction) string {
	if u := s.link(in); u != "" {
		return "<" + escapeURL(u) + "|open in hitl>"
	}
	return "open in hitl"
}

// plural is word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// actionButtons returns the buttons that answer the action in, one per
// decision it allows (Edit only when Slack can edit its arguments, Always
// allow only when approving is allowed and the action names its agent),
// and the hint on replying in the thread.
func (m *message) actionButtons(in *hitl.Interaction) ([]slack.BlockElement, string) {
	var els []slack.BlockElement
	button := func(text, kind, key, style string) {
		b := slack.NewButtonBlockElement(m.token(in, kind, key), "", plain(text, maxButtonText))
		b.Value, b.Style = b.ActionID, slack.Style(style)
		els = append(els, b)
	}
	if in.Allows(hitl.DecisionApprove) {
		button("Approve", kindOption, string(hitl.DecisionApprove), string(slack.StylePrimary))
	}
	if _, ok := editForm(in); ok && in.Allows(hitl.DecisionEdit) {
		button("Edit", kindOpen, string(hitl.DecisionEdit), "")
	}
	if in.Allows(hitl.DecisionReject) {
		button("Reject", kindOpen, string(hitl.DecisionReject), string(slack.StyleDanger))
	}
	if in.Allows(hitl.DecisionRespond) {
		button("Respond", kindOpen, string(hitl.DecisionRespond), "")
	}
	if in.Allows(hitl.DecisionApprove) && in.SourceAgent != "" {
		button("Always allow", kindOpen, keyAlways, "")
	}
	return els, "or reply in this thread: " + replyForms(in)
}

// replyForms lists the thread replies that answer the action in (see
// actionReply).
func replyForms(in *hitl.Interaction) string {
	var forms []string
	for _, f := range []struct {
		d    hitl.Decision
		text string
	}{
		{hitl.DecisionApprove, "`approve`"},
		{hitl.DecisionEdit, "`edit` and a JSON object"},
		{hitl.DecisionReject, "`reject` and a reason"},
		{hitl.DecisionRespond, "anything else to answer instead"},
	} {
		if in.Allows(f.d) {
			forms = append(forms, f.text)
		}
	}
	return orList(forms)
}

// orList joins "a", "b" and "c" as "a, b, or c".
func orList(items []string) string {
	switch len(items) {
	case 0, 1:
		return strings.Join(items, "")
	case 2:
		return items[0] + " or " + items[1]
	}
	return strings.Join(items[:len(items)-1], ", ") + ", or " + items[len(items)-1]
}
