// Package tools defines hitl's agent tools — human_feedback (the
// human_feedback contract's text-in, text-out tool), ask_human (the typed
// one) and handoff_to_human (give the conversation to a person) — once, for every way an agent can be offered them: the MCP
// server, and the function-calling formats of model providers (OpenAI,
// Anthropic) for agents that call models directly. Call runs a tool call a
// model made against any hitl.Service, so such an agent can forward the
// call to hitl and hand the result back to the model.
//
// It also reviews Claude Code's own tool calls as actions (Review), for
// its hooks (Hook: hitl hook claude-code and the HTTP hook endpoint) and
// its --permission-prompt-tool (PermissionPrompt, served by the MCP
// server), in the shapes Claude Code reads.
package tools

import "encoding/json"

// Tool names.
const (
	HumanFeedbackName = "human_feedback"
	AskHumanName      = "ask_human"
)

// Bounds of human_feedback's timeout_seconds, and the default of both tools.
const (
	DefaultTimeoutSeconds = 300
	MinFeedbackTimeout    = 30
	MaxFeedbackTimeout    = 1800
	MinAskTimeout         = 1
	MaxAskTimeout         = 86400
)

// Tool is one tool definition, independent of any provider's format.
type Tool struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the JSON Schema (2020-12) of the arguments.
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema of the structured result; nil for a
	// tool that returns text only.
	OutputSchema json.RawMessage
}

// HumanFeedback returns the human_feedback tool: ask the user something,
// get their reply as text.
func HumanFeedback() Tool {
	return Tool{
		Name:        HumanFeedbackName,
		Title:       "Ask the user",
		Description: humanFeedbackDescription,
		InputSchema: json.RawMessage(humanFeedbackInput),
	}
}

// AskHuman returns the ask_human tool: a typed question (approval, choice,
// form, free text, or an action to review) with a structured, validated
// answer.
func AskHuman() Tool {
	return Tool{
		Name:         AskHumanName,
		Title:        "Ask a human (typed)",
		Description:  askHumanDescription,
		InputSchema:  json.RawMessage(askHumanInput),
		OutputSchema: json.RawMessage(askHumanOutput),
	}
}

// All returns the agent tools in name order (as MCP lists them):
// ask_human, handoff_to_human, human_feedback.
func All() []Tool {
	return []Tool{AskHuman(), Handoff(), HumanFeedback()}
}

// Lookup returns the tool with the given name.
func Lookup(name string) (Tool, bool) {
	for _, t := range All() {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

const humanFeedbackDescription = `Ask the user a question and wait for their reply. Use it whenever you need a person: to approve an action before you take it (a deployment, a deletion, a payment, anything hard to undo), to get something only they have (a 2FA or OTP code, a confirmation link), or to clarify an ambiguous request instead of guessing.

The user sees message_for_user at once in their hitl inbox (and on Slack if they have not answered after a couple of minutes). The call blocks until they answer or timeout_seconds pass, then returns their reply as text. Pass options to have them pick one; you get back the text of the option they chose.

Make a fresh unique_id for every new request (for example a UUID, or "feedback_" followed by the current Unix time in nanoseconds). Reuse an id only to retry the very same request: that returns the same request, and its answer, instead of asking twice.

If the result is an error such as "timeout waiting for feedback", you have no answer: do not proceed as if the user agreed.`

const humanFeedbackInput = `{
  "type": "object",
  "properties": {
    "message_for_user": {
      "type": "string",
      "minLength": 1,
      "description": "What the user sees: your question, or exactly what you need from them (e.g. \"Enter the 6-digit code sent to your email\"). Self-contained; Markdown allowed."
    },
    "unique_id": {
      "type": "string",
      "minLength": 1,
      "maxLength": 200,
      "description": "A fresh id for this request, such as a UUID. Never reuse one for a different request."
    },
    "options": {
      "type": "array",
      "items": {"type": "string"},
      "maxItems": 100,
      "description": "Optional choices; the user picks one and you get its text back. Omit for a free-text reply."
    },
    "timeout_seconds": {
      "type": "integer",
      "minimum": 30,
      "maximum": 1800,
      "default": 300,
      "description": "How long to wait for the reply, in seconds (default 300)."
    }
  },
  "required": ["message_for_user", "unique_id"],
  "additionalProperties": false
}`

const askHumanDescription = `Ask a person a typed question and wait for a validated answer. Choose interaction_type by what you need back:
- approval: true if they approve, false if they reject. Ask before risky or irreversible actions.
- single_choice: the key of the one option they pick.
- multi_choice: an array of the keys of the options they pick.
- form: an object valid against form_schema (a JSON Schema with "type": "object"), to collect several fields at once.
- free_text (the default): a string, such as a clarification or a one-time code.
- action: a decision about a tool call you want to make, given as action {name, args, description}: {"decision": "approve"} (run it as proposed), {"decision": "edit", "args": {…}} (run it with these arguments instead), {"decision": "reject", "message": "…"} (do not run it; the message says why), or {"decision": "respond", "message": "…"} (do not run it; the message is the person's reply). args_schema is the JSON Schema an edit must meet; decisions narrows what the person may choose.

options are strings or {key, label, description} objects; a string's key is derived from it ("EU West" becomes "eu_west"). Put what the person needs to decide in context.

The call blocks until the person answers or timeout seconds pass (default 300) and returns {status, value, responded_by, channel}. An expired or cancelled question comes back as an error: you have no answer, so do not proceed as if approved. A rejected action is an answer, not an error: do not run it.`

const askHumanInput = `{
  "type": "object",
  "properties": {
    "question": {
      "type": "string",
      "minLength": 1,
      "description": "The question, short and self-contained."
    },
    "interaction_type": {
      "type": "string",
      "enum": ["approval", "single_choice", "multi_choice", "form", "free_text", "action"],
      "description": "The kind of answer you need. Default: action when action is given, single_choice when options are, form when form_schema is, else free_text."
    },
    "options": {
      "type": "array",
      "items": {
        "anyOf": [
          {"type": "string"},
          {
            "type": "object",
            "properties": {
              "key": {"type": "string", "description": "What you get back when this option is chosen."},
              "label": {"type": "string", "description": "What the person sees."},
              "description": {"type": "string"}
            }
          }
        ]
      },
      "maxItems": 100,
      "description": "Choices for single_choice and multi_choice (required there). For approval, optionally two options relabelling approve (first) and reject (second)."
    },
    "context": {
      "type": "string",
      "description": "Supporting detail shown with the question (Markdown): what you are about to do, what you found, why you ask."
    },
    "timeout": {
      "type": "number",
      "minimum": 1,
      "maximum": 86400,
      "default": 300,
      "description": "Seconds to wait for an answer (default 300)."
    },
    "form_schema": {
      "type": "object",
      "description": "For form: a JSON Schema (2020-12) describing the fields, e.g. {\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}}, \"required\": [\"name\"]}."
    },
    "default_response": {
      "description": "An answer to pre-fill, in the value format of the type: true/false, an option key, an array of keys, an object, or a string."
    },
    "on_timeout": {
      "type": "string",
      "enum": ["cancel", "default"],
      "description": "At the deadline: cancel (the default; you get an error) or default (you get default_response as the answer)."
    },
    "action": {
      "type": "object",
      "properties": {
        "name": {"type": "string", "minLength": 1, "description": "The tool you want to run, such as Bash."},
        "args": {"type": "object", "description": "Its arguments, as you would call it."},
        "description": {"type": "string", "description": "What the call is for, for the person."}
      },
      "required": ["name"],
      "description": "For action: the tool call to review."
    },
    "args_schema": {
      "type": "object",
      "description": "For action: a JSON Schema the edited arguments must meet."
    },
    "decisions": {
      "type": "array",
      "items": {"type": "string", "enum": ["approve", "edit", "reject", "respond"]},
      "description": "For action: the decisions the person may make (default all four)."
    },
    "reject_requires_message": {
      "type": "boolean",
      "description": "For action: the person must say why when rejecting."
    },
    "escalation": {
      "type": "array",
      "maxItems": 10,
      "items": {
        "type": "object",
        "properties": {
          "after": {"type": "string", "description": "When the step fires after the question was asked, a Go duration such as 10m or 1h30m; before the timeout, later than the step before."},
          "remind": {"type": "boolean", "description": "Remind the current targets."},
          "add_targets": {
            "type": "object",
            "properties": {
              "users": {"type": "array", "items": {"type": "string"}},
              "groups": {"type": "array", "items": {"type": "string"}}
            },
            "additionalProperties": false,
            "description": "People and groups to add to those who may answer, and tell."
          },
          "channels": {"type": "array", "items": {"type": "string", "enum": ["slack", "email", "web"]}, "description": "Where to tell them (default every channel)."},
          "only_between": {"type": "string", "pattern": "^[0-9]{1,2}:[0-9]{2}-[0-9]{1,2}:[0-9]{2}$", "description": "Working hours, HH:MM-HH:MM: a step due outside them fires at the next opening."},
          "tz": {"type": "string", "description": "The IANA time zone of only_between (default UTC)."},
          "weekdays": {"type": "boolean", "description": "With only_between: Monday to Friday only."}
        },
        "required": ["after"],
        "additionalProperties": false
      },
      "description": "Reminders and escalation while nobody answers: each step reminds the people asked, or adds people to ask. Omit for the server's default; an empty list for none."
    }
  },
  "required": ["question"],
  "additionalProperties": false
}`

const askHumanOutput = `{
  "type": "object",
  "properties": {
    "status": {
      "type": "string",
      "enum": ["answered", "expired", "cancelled"],
      "description": "answered, or why there is no answer."
    },
    "value": {
      "description": "The answer: true/false for approval, an option key for single_choice, an array of keys for multi_choice, an object for form, a string for free_text, and for action {decision, args?, message?}."
    },
    "responded_by": {"type": "string", "description": "Who answered (or cancelled)."},
    "channel": {"type": "string", "description": "Where they answered: web, slack, cli, api, mcp, or timeout for a default applied at the deadline."},
    "interaction_id": {"type": "string"},
    "timed_out": {"type": "boolean", "description": "True when nobody answered and the default response was used."},
    "reason": {"type": "string", "description": "Why it was cancelled or expired."}
  },
  "required": ["status", "interaction_id"]
}`
