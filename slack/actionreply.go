package slack

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/hitl-sh/hitl"
)

// Thread replies to an action. A reply is read as:
//
//	approve (or approved, yes, allow, accept), alone  → approve
//	reject (or no, deny) [reason]                     → reject, with the reason
//	edit {JSON object}                                → edit, with those arguments
//	respond <text>                                    → respond with the text
//	anything else                                     → respond with the whole reply
//
// Words are matched in any case, and may end with ".", "!", "," or ":".
// "yes, but use --dry-run" is not an approval: it is a reply instead of
// the action running. The engine checks the answer as any other (a
// decision the agent does not allow is refused, and the person told why).

var (
	replyApprove = map[string]bool{"approve": true, "approved": true, "yes": true, "allow": true, "accept": true}
	replyReject  = map[string]bool{"reject": true, "no": true, "deny": true}
)

// actionReply reads a thread reply to the action in as its answer, or
// returns what to tell the person when it cannot be one.
func actionReply(in *hitl.Interaction, text string) (json.RawMessage, string) {
	word, rest := text, ""
	if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		word, rest = text[:i], text[i:]
	}
	word = strings.ToLower(strings.TrimRight(word, ".!,:;"))
	rest = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(rest), ":-–—"))
	value := func(v any) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	type decided struct {
		Decision hitl.Decision   `json:"decision"`
		Args     json.RawMessage `json:"args,omitempty"`
		Message  string          `json:"message,omitempty"`
	}
	switch {
	case replyApprove[word] && rest == "":
		return value(decided{Decision: hitl.DecisionApprove}), ""
	case replyReject[word]:
		return value(decided{Decision: hitl.DecisionReject, Message: rest}), ""
	case word == string(hitl.DecisionEdit):
		args := unfence(rest)
		if problem := jsonObjectProblem(args); problem != "" {
			return nil, "To edit in the thread, reply `edit` and the arguments as a JSON object, such as `edit {\"command\": \"…\"}`. " + escape(problem) + "."
		}
		return value(decided{Decision: hitl.DecisionEdit, Args: json.RawMessage(args)}), ""
	case word == string(hitl.DecisionRespond):
		return value(decided{Decision: hitl.DecisionRespond, Message: rest}), ""
	case in.Allows(hitl.DecisionRespond) || in.Status != hitl.StatusPending:
		return value(decided{Decision: hitl.DecisionRespond, Message: text}), ""
	}
	return nil, "That reply does not answer this action: reply " + replyForms(in) + "."
}

// unfence removes the code fence or backticks a JSON object was sent in.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "```") && strings.HasSuffix(s, "```") && len(s) >= 6 {
		s = strings.TrimSuffix(strings.TrimPrefix(s, "```"), "```")
		s = strings.TrimPrefix(s, "json")
	} else if strings.HasPrefix(s, "`") && strings.HasSuffix(s, "`") && len(s) >= 2 {
		s = s[1 : len(s)-1]
	}
	return strings.TrimSpace(s)
}
