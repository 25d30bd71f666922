package slack

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
)

// Kinds of action tokens (hitl.SlackAction.Kind).
const (
	kindOption     = "option"     // a button or an option: choose OptionKey
	kindSelect     = "select"     // a select menu: the chosen option's value is a token
	kindCheckboxes = "checkboxes" // checkboxes or a multi-select; read on submit
	kindSubmit     = "submit"     // submit the checked options
	kindOpen       = "open"       // open a modal (free text, form)
)

// linkActionID names the "Open in hitl" button, which only links.
const linkActionID = "hitl_open_link"

// Block Kit limits.
const (
	maxSectionText = 3000
	maxHeaderText  = 150
	maxButtonText  = 75
	maxOptionText  = 75
	maxButtons     = 5   // a single choice beyond this is a select menu
	maxCheckboxes  = 10  // a multiple choice beyond this is a multi-select
	maxSelect      = 100 // beyond this, only the web inbox
)

// message is a message to post or to update with.
type message struct {
	text    string // the notification's text, and the fallback
	blocks  []slack.Block
	actions []*hitl.SlackAction // the tokens its elements carry
}

func (m *message) options() []slack.MsgOption {
	return []slack.MsgOption{slack.MsgOptionText(m.text, false), slack.MsgOptionBlocks(m.blocks...)}
}

// token returns a new opaque token for an element of in, recorded with
// what it means.
func (m *message) token(in *hitl.Interaction, kind, key string) string {
	t := newToken()
	m.actions = append(m.actions, &hitl.SlackAction{Token: t, InteractionID: in.ID, Kind: kind, OptionKey: key})
	return t
}

// newToken returns 128 random bits, printable.
func newToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return "h" + base64.RawURLEncoding.EncodeToString(b)
}

func plain(s string, n int) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, truncate(s, n), true, false)
}

func md(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

func section(text string) *slack.SectionBlock {
	return slack.NewSectionBlock(md(text), nil, nil)
}

func contextBlock(texts ...string) *slack.ContextBlock {
	els := make([]slack.MixedElement, len(texts))
	for i, t := range texts {
		els[i] = md(t)
	}
	return slack.NewContextBlock("", els...)
}

// title is the message's header for in's type.
func title(in *hitl.Interaction) string {
	switch in.Type {
	case hitl.TypeApproval:
		return "Approval needed"
	case hitl.TypeSingleChoice:
		return "Choose one"
	case hitl.TypeMultiChoice:
		return "Choose any"
	case hitl.TypeForm:
		return "Form to fill in"
	case hitl.TypeAction:
		return "Action to review"
	case hitl.TypeHandoff:
		return "Conversation handed to you"
	}
	return "Question"
}

// slackDate formats t for Slack, which shows it in each reader's time
// zone; fallback is what clients that cannot show it get.
func slackDate(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{date_short_pretty} at {time}|%s>", t.Unix(), t.UTC().Format("2006-01-02 15:04 UTC"))
}

// link returns the web inbox's URL for in, or "".
func (s *Service) link(in *hitl.Interaction) string {
	if s.publicURL == "" {
		return ""
	}
	return strings.TrimSuffix(s.publicURL, "/") + "/?interaction=" + url.QueryEscape(in.ID)
}

// header returns the blocks every message starts with: the title, the
// question (an action's summary when its agent asked none, and beneath
// the agent's own question otherwise) and its context.
func header(in *hitl.Interaction, mention string) []slack.Block {
	sub := ""
	if s := in.Subline(); s != "" {
		sub = "\n`" + escape(strings.ReplaceAll(s, "`", "'")) + "`"
	}
	q := truncateMrkdwn(in.Headline(), maxSectionText-len(mention)-len(sub)) + sub
	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(title(in), maxHeaderText)),
		section(mention + q),
	}
	if strings.TrimSpace(in.Context) != "" {
		blocks = append(blocks, section(truncateMrkdwn(in.Context, maxSectionText)))
	}
	return blocks
}

// footer is the request id in a context block.
func footer(in *hitl.Interaction, extra string) slack.Block {
	text := "hitl request `" + escape(in.ID) + "`"
	if extra != "" {
		text += " · " + extra
	}
	return contextBlock(text)
}

// mentionText is what starts a message for the configured mention.
func mentionText(m string) string {
	switch m {
	case MentionHere:
		return "<!here> "
	case MentionChannel:
		return "<!channel> "
	}
	return ""
}

// newMessage builds the message asking in: header, question, context,
// deadline and agent, the elements to answer with (each carrying a token,
// never a label), a link to the web inbox and the request id.
func (s *Service) newMessage(in *hitl.Interaction, cfg Config) *message {
	m := &message{}
	mention := mentionText(cfg.Mention)
	m.text = mention + title(in) + ": " + plainText(in.Headline(), 300)
	m.blocks = header(in, mention)

	var meta []string
	if !in.Deadline.IsZero() {
		meta = append(meta, "⏰ Answer by "+slackDate(in.Deadline))
	}
	if in.SourceAgent != "" && in.Type != hitl.TypeAction { // an action's card names it
		meta = append(meta, "🤖 "+escape(truncate(in.SourceAgent, 200)))
	}
	if in.Type == hitl.TypeHandoff {
		meta = append([]string{"🙋 The agent handed this conversation to a person; your reply resumes it"}, meta...)
	}
	if len(meta) > 0 {
		m.blocks = append(m.blocks, contextBlock(strings.Join(meta, "  ·  ")))
	}
	if in.Type == hitl.TypeAction {
		m.blocks = append(m.blocks, s.actionBlocks(in)...)
	}
	if b := workflowBlock(in, s.now()); b != nil {
		m.blocks = append(m.blocks, b)
	}

	els, hint := m.elements(in)
	if u := s.link(in); u != "" {
		b := slack.NewButtonBlockElement(linkActionID, "", plain("Open in hitl", maxButtonText))
		b.URL = u
		els = append(els, b)
	}
	if len(els) > 0 {
		m.blocks = append(m.blocks, slack.NewActionBlock("hitl_actions", els...))
	}
	m.blocks = append(m.blocks, footer(in, hint))
	return m
}

// elements returns the elements that answer in, for its type, and the
// hint on answering in the thread.
func (m *message) elements(in *hitl.Interaction) ([]slack.BlockElement, string) {
	var els []slack.BlockElement
	hint := "or reply in this thread"
	switch in.Type {
	case hitl.TypeAction:
		els, hint = m.actionButtons(in)
	case hitl.TypeApproval:
		yes := slack.NewButtonBlockElement("", "", plain(in.Options[0].Label, maxButtonText))
		yes.ActionID = m.token(in, kindOption, in.Options[0].Key)
		yes.Value, yes.Style = yes.ActionID, slack.StylePrimary
		no := slack.NewButtonBlockElement("", "", plain(in.Options[1].Label, maxButtonText))
		no.ActionID = m.token(in, kindOption, in.Options[1].Key)
		no.Value, no.Style = no.ActionID, slack.StyleDanger
		els = append(els, yes, no)
		hint = "or reply yes or no in this thread"
	case hitl.TypeSingleChoice:
		switch n := len(in.Options); {
		case n <= maxButtons:
			for _, o := range in.Options {
				b := slack.NewButtonBlockElement("", "", plain(o.Label, maxButtonText))
				b.ActionID = m.token(in, kindOption, o.Key)
				b.Value = b.ActionID
				els = append(els, b)
			}
		case n <= maxSelect:
			sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Choose…", maxOptionText),
				m.token(in, kindSelect, ""), m.optionObjects(in)...)
			els = append(els, sel)
		default:
			hint = "too many options for Slack: answer in the web inbox, or reply with an option in this thread"
		}
		if len(in.Options) <= maxSelect {
			hint = "or reply with an option in this thread"
		}
	case hitl.TypeMultiChoice:
		switch n := len(in.Options); {
		case n <= maxCheckboxes:
			els = append(els, slack.NewCheckboxGroupsBlockElement(m.token(in, kindCheckboxes, ""), m.optionObjects(in)...))
		case n <= maxSelect:
			els = append(els, slack.NewOptionsMultiSelectBlockElement(slack.MultiOptTypeStatic, plain("Choose…", maxOptionText),
				m.token(in, kindCheckboxes, ""), m.optionObjects(in)...))
		}
		if len(in.Options) <= maxSelect {
			submit := slack.NewButtonBlockElement(m.token(in, kindSubmit, ""), "", plain("Submit", maxButtonText))
			submit.Value, submit.Style = submit.ActionID, slack.StylePrimary
			els = append(els, submit)
			hint = "or reply with options, separated by commas, in this thread"
		} else {
			hint = "too many options for Slack: answer in the web inbox, or reply with options in this thread"
		}
	case hitl.TypeForm:
		if _, ok := formFields(in.FormSchema); ok {
			b := slack.NewButtonBlockElement(m.token(in, kindOpen, ""), "", plain("Fill in", maxButtonText))
			b.Value, b.Style = b.ActionID, slack.StylePrimary
			els = append(els, b)
			hint = "or reply with a JSON object in this thread"
		} else {
			hint = "this form is answered in the web inbox (or reply with a JSON object in this thread)"
		}
	case hitl.TypeHandoff:
		b := slack.NewButtonBlockElement(m.token(in, kindOpen, ""), "", plain("Reply", maxButtonText))
		b.Value, b.Style = b.ActionID, slack.StylePrimary
		els = append(els, b)
	default:
		b := slack.NewButtonBlockElement(m.token(in, kindOpen, ""), "", plain("Answer", maxButtonText))
		b.Value, b.Style = b.ActionID, slack.StylePrimary
		els = append(els, b)
	}
	return els, hint
}

// optionObjects returns in's options for a select or checkboxes, each
// valued with a new token.
func (m *message) optionObjects(in *hitl.Interaction) []*slack.OptionBlockObject {
	out := make([]*slack.OptionBlockObject, len(in.Options))
	for i, o := range in.Options {
		var desc *slack.TextBlockObject
		if o.Description != "" {
			desc = plain(o.Description, maxOptionText)
		}
		out[i] = slack.NewOptionBlockObject(m.token(in, kindOption, o.Key), plain(o.Label, maxOptionText), desc)
	}
	return out
}

// endedMessage builds the message that replaces the question once in has
// ended: the same header (and an action's card), the outcome, and no
// elements to answer with.
func (s *Service) endedMessage(ctx context.Context, in *hitl.Interaction) *message {
	out := outcome(in)
	m := &message{text: title(in) + ": " + plainText(in.Headline(), 200) + " — " + outcomePlain(in)}
	m.blocks = header(in, "")
	if in.Type == hitl.TypeAction {
		m.blocks = append(m.blocks, s.actionBlocks(in)...)
	}
	m.blocks = append(m.blocks, section(out))
	if b := workflowBlock(in, s.now()); b != nil {
		m.blocks = append(m.blocks, b)
	}
	if in.Type == hitl.TypeAction && in.Status == hitl.StatusAnswered {
		m.blocks = append(m.blocks, s.editDiff(in)...)
		if r := s.madeRule(ctx, in); r != nil {
			m.blocks = append(m.blocks, slack.NewSectionBlock(verbatim(ruleLine(r)), nil, nil))
		}
	}
	extra := ""
	if u := s.link(in); u != "" {
		extra = "<" + escapeURL(u) + "|Open in hitl>"
	}
	m.blocks = append(m.blocks, footer(in, extra))
	return m
}

// who names an answerer for Slack: a Slack user as a mention, anyone else
// by name.
func who(name string) string {
	if id, ok := strings.CutPrefix(name, "slack:"); ok && id != "" {
		return "<@" + escape(id) + ">"
	}
	if name == "" {
		return "hitl"
	}
	return "*" + escape(name) + "*"
}

// outcome says how in ended, in mrkdwn: "✅ Approved by … via web at …",
// "⌛ Expired", "🚫 Cancelled by the agent". Free-text and form answers
// are not repeated (they may be secrets); choices are.
func outcome(in *hitl.Interaction) string {
	r := in.Result
	if r == nil {
		r = &hitl.Result{}
	}
	by := fmt.Sprintf("by %s via %s at %s", who(r.RespondedBy), escape(r.Channel), slackDate(r.RespondedAt))
	switch in.Status {
	case hitl.StatusAnswered:
		if r.TimedOut && in.Type == hitl.TypeAction {
			return "⌛ Expired at " + slackDate(r.RespondedAt) + "; the default answer was used: " + decisionPhrase(in)
		}
		if r.TimedOut {
			return "⌛ Expired at " + slackDate(r.RespondedAt) + "; the default answer was used"
		}
		switch in.Type {
		case hitl.TypeAction:
			return actionOutcome(in, by)
		case hitl.TypeApproval:
			var ok bool
			if json.Unmarshal(r.Value, &ok) == nil && ok {
				return "✅ Approved " + by
			}
			return "❌ Rejected " + by
		case hitl.TypeSingleChoice:
			var key string
			_ = json.Unmarshal(r.Value, &key)
			return "✅ Answered " + by + ": *" + escape(label(in, key)) + "*"
		case hitl.TypeMultiChoice:
			var keys []string
			_ = json.Unmarshal(r.Value, &keys)
			labels := make([]string, len(keys))
			for i, k := range keys {
				labels[i] = "*" + escape(label(in, k)) + "*"
			}
			if len(labels) == 0 {
				return "✅ Answered " + by + ": none chosen"
			}
			return "✅ Answered " + by + ": " + strings.Join(labels, ", ")
		case hitl.TypeHandoff:
			return "✅ Replied " + by
		}
		return "✅ Answered " + by
	case hitl.StatusExpired:
		return "⌛ Expired at " + slackDate(in.Deadline)
	case hitl.StatusCancelled:
		text := "🚫 Cancelled by the agent"
		if r.RespondedBy != "" && r.RespondedBy != in.CreatedBy {
			text = "🚫 Cancelled by " + who(r.RespondedBy)
		}
		if r.Reason != "" && r.Reason != hitl.CancelledByAgent {
			text += ": " + escape(truncate(r.Reason, 500))
		}
		return text
	}
	return "Still waiting for an answer"
}

// outcomePlain is outcome for a notification text: no markup.
func outcomePlain(in *hitl.Interaction) string {
	switch in.Status {
	case hitl.StatusAnswered:
		if in.Result != nil && in.Result.TimedOut {
			return "expired"
		}
		if in.Type == hitl.TypeAction && in.Result != nil {
			return actionPlain(in)
		}
		return "answered"
	case hitl.StatusExpired:
		return "expired"
	case hitl.StatusCancelled:
		return "cancelled"
	}
	return "pending"
}

// label returns the label of in's option key, or the key.
func label(in *hitl.Interaction, key string) string {
	if o, ok := in.Option(key); ok {
		return o.Label
	}
	return key
}
