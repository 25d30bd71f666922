package email

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hitl-sh/hitl"
)

// maxSubject bounds the question's part of a subject line, in characters.
const maxSubject = 80

//go:embed mail.html
var mailHTML string

// mailTemplate is parsed when first used, as markdown is made.
var mailTemplate = sync.OnceValue(func() *template.Template { return template.Must(template.New("mail").Parse(mailHTML)) })

// mailLink is one link in a mail: an option to choose, or the card.
type mailLink struct {
	Label       string
	Description string
	URL         string
}

// mailData is what a mail says.
type mailData struct {
	Question string        // the headline: an action's summary when its agent asked nothing
	Summary  string        // an action's summary beneath the agent's own question, or ""
	Context  template.HTML // rendered Markdown, raw HTML escaped
	Agent    string
	Tool     string // an action's tool and kind, "" for other questions
	Deadline string
	Type     string
	Options  []mailLink // one per option, for approval and single choice
	Card     string     // the inbox card, for the other types
	Inbox    string
}

// message is a mail ready to send.
type message struct {
	to      string
	subject string
	text    string
	html    string
}

// compose writes the mail telling n's recipient of its interaction, with
// a signed link per option (approval, single choice) or a link to the
// card.
func (s *Service) compose(n *hitl.Notification, key []byte) (*message, error) {
	in := n.Interaction
	base := strings.TrimSuffix(s.publicURL, "/")
	d := mailData{
		Question: in.Headline(),
		Summary:  in.Subline(),
		Agent:    agentName(in),
		Tool:     toolName(in),
		Deadline: deadlineText(in.Deadline),
		Type:     string(in.Type),
		Inbox:    base + "/",
	}
	if in.Context != "" {
		c, err := renderMarkdown(in.Context)
		if err != nil {
			return nil, fmt.Errorf("render context: %w", err)
		}
		d.Context = c
	}
	switch in.Type {
	case hitl.TypeApproval, hitl.TypeSingleChoice:
		exp := linkExpiry(in)
		for _, o := range in.Options {
			token := sign(key, n, o.Key, exp)
			d.Options = append(d.Options, mailLink{
				Label: o.Label, Description: o.Description,
				URL: base + LinkPath + "?t=" + url.QueryEscape(token),
			})
		}
	default:
		d.Card = base + "/?interaction=" + url.QueryEscape(in.ID)
	}
	var html bytes.Buffer
	if err := mailTemplate().Execute(&html, d); err != nil {
		return nil, fmt.Errorf("write mail: %w", err)
	}
	return &message{
		to:      n.Recipient,
		subject: subject(in, n.Round),
		text:    plainText(in, d),
		html:    html.String(),
	}, nil
}

// subject is the mail's subject line; a reminder (a round after the
// first) says so.
func subject(in *hitl.Interaction, round int) string {
	q := strings.Join(strings.Fields(in.Headline()), " ")
	if utf8.RuneCountInString(q) > maxSubject {
		q = string([]rune(q)[:maxSubject-1]) + "…"
	}
	if round > 0 {
		return "[hitl] Reminder: " + q
	}
	return "[hitl] " + q
}

// plainText is the mail's text part.
func plainText(in *hitl.Interaction, d mailData) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", d.Question)
	if d.Summary != "" {
		fmt.Fprintf(&b, "%s\n\n", d.Summary)
	}
	if in.Context != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(in.Context))
	}
	fmt.Fprintf(&b, "Asked by: %s\n", d.Agent)
	if d.Tool != "" {
		fmt.Fprintf(&b, "Tool: %s\n", d.Tool)
	}
	if d.Deadline != "" {
		fmt.Fprintf(&b, "Answer by: %s\n", d.Deadline)
	}
	b.WriteString("\n")
	if len(d.Options) > 0 {
		b.WriteString("Choose an answer (each link opens a page where you confirm it):\n\n")
		for _, o := range d.Options {
			fmt.Fprintf(&b, "%s:\n%s\n\n", o.Label, o.URL)
		}
	} else if in.Type == hitl.TypeHandoff {
		fmt.Fprintf(&b, "The agent handed this conversation to a person. Reply in hitl:\n%s\n\n", d.Card)
	} else {
		fmt.Fprintf(&b, "Answer it in hitl:\n%s\n\n", d.Card)
	}
	b.WriteString("-- \nYou get this mail because a question in hitl is waiting for you. The links are yours alone and work once.\n")
	return b.String()
}

// agentName is who asked, for people.
func agentName(in *hitl.Interaction) string {
	switch {
	case in.SourceAgent != "":
		return in.SourceAgent
	case in.CreatedBy != "":
		return in.CreatedBy
	}
	return "an agent"
}

// toolName names an action's tool for people, with its kind: "Bash
// (shell command)"; "" for a question that is not an action.
func toolName(in *hitl.Interaction) string {
	if in.Action == nil {
		return ""
	}
	if in.Action.Kind == "" {
		return in.Action.Name
	}
	return in.Action.Name + " (" + hitl.KindTitle(in.Action.Kind) + ")"
}

// deadlineText writes a deadline for people, in UTC.
func deadlineText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("Mon 2 Jan 2006 15:04 MST")
}
