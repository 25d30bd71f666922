package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hitl-sh/hitl"
)

// exitResponded is hitl ask's exit code when the person answered an action
// with a reply instead of letting it run (respond): the reply is on
// stdout.
const exitResponded = 5

// actionHelp is what hitl ask -h says about actions.
const actionHelp = "An action (--type action, or any --action-name) asks a person to review a\n" +
	"tool call: --action-name names it, --args holds its arguments (a JSON\n" +
	"object). The question defaults to \"Run NAME?\". The person approves it,\n" +
	"edits the arguments, rejects it, or responds instead:\n" +
	"  approve or edit: exit 0, the arguments to run with on stdout (JSON);\n" +
	"  reject: exit 1, the person's reason (if any) on stderr;\n" +
	"  respond: exit 5, the person's reply on stdout.\n" +
	"A rule (hitl rule) may decide at once, without a person."

// actionFlags are hitl ask's flags for an action.
type actionFlags struct {
	name, args, schema, decisions, description string
	rejectNeedsMessage                         bool
}

// register adds the flags to fs.
func (a *actionFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.name, "action-name", "", "the tool an action is about, such as Bash (implies --type action)")
	fs.StringVar(&a.args, "args", "", "the action's arguments: a JSON `object`, or a file holding one (- reads stdin)")
	fs.StringVar(&a.schema, "args-schema", "", "JSON `Schema` an edit of the arguments must meet, inline or a file")
	fs.StringVar(&a.decisions, "decisions", "", "the decisions the person may make, comma-separated from\napprove, edit, reject and respond (default all four)")
	fs.StringVar(&a.description, "action-description", "", "what the action is for, shown to the person")
	fs.BoolVar(&a.rejectNeedsMessage, "reject-requires-message", false, "a reason is required to reject the action")
}

// set reports whether any action flag was given.
func (a *actionFlags) set() bool {
	return a.name != "" || a.args != "" || a.schema != "" || a.decisions != "" || a.description != "" || a.rejectNeedsMessage
}

// apply adds the action to req (whose type it makes action when unset).
func (a *actionFlags) apply(req *hitl.CreateRequest) error {
	if !a.set() {
		return nil
	}
	if req.Type == "" {
		req.Type = hitl.TypeAction
	}
	if req.Type != hitl.TypeAction {
		return fmt.Errorf("--action-name, --args, --args-schema, --decisions, --action-description and --reject-requires-message are only for --type action")
	}
	if a.name == "" {
		return errors.New("an action needs --action-name, as in: hitl ask --action-name Bash --args '{\"command\": \"make deploy\"}'")
	}
	req.Action = &hitl.Action{Name: a.name, Description: a.description}
	var err error
	if a.args != "" {
		if req.Action.Args, err = jsonArg("--args", a.args); err != nil {
			return err
		}
	}
	if a.schema != "" {
		if req.ArgsSchema, err = jsonArg("--args-schema", a.schema); err != nil {
			return err
		}
	}
	for _, d := range splitList(a.decisions) {
		req.Decisions = append(req.Decisions, hitl.Decision(d))
	}
	req.RejectRequiresMessage = a.rejectNeedsMessage
	return nil
}

// jsonArg reads a flag's JSON value: inline when it starts with { or [,
// else from the file it names (- for stdin).
func jsonArg(flagName, v string) (json.RawMessage, error) {
	data := []byte(strings.TrimSpace(v))
	if len(data) == 0 || data[0] != '{' && data[0] != '[' {
		var err error
		if v == "-" {
			data, err = io.ReadAll(os.Stdin)
		} else {
			data, err = os.ReadFile(v)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", flagName, err)
		}
		data = bytes.TrimSpace(data)
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%s is not valid JSON", flagName)
	}
	return data, nil
}

// printAction prints an answered action's decision and returns hitl ask's
// exit code: the arguments to run with on stdout (exit 0), a rejection's
// reason on stderr (exit 1), a reply on stdout (exit 5).
func printAction(in *hitl.Interaction, stdout, stderr io.Writer) int {
	var d struct {
		Decision hitl.Decision   `json:"decision"`
		Args     json.RawMessage `json:"args"`
		Message  string          `json:"message"`
	}
	if err := json.Unmarshal(in.Result.Value, &d); err != nil {
		fmt.Fprintf(stderr, "hitl ask: unexpected action value %s\n", in.Result.Value)
		return exitError
	}
	if by := in.Result.RuleID; by != "" {
		fmt.Fprintf(stderr, "hitl ask: decided by rule %s\n", by)
	}
	switch d.Decision {
	case hitl.DecisionApprove, hitl.DecisionEdit:
		args := d.Args
		if d.Decision == hitl.DecisionApprove && in.Action != nil {
			args = in.Action.Args
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, args); err != nil {
			buf.Reset()
			buf.Write(args)
		}
		fmt.Fprintln(stdout, buf.String())
		return exitAnswered
	case hitl.DecisionReject:
		if d.Message == "" {
			d.Message = "rejected"
		}
		fmt.Fprintln(stderr, d.Message)
		return exitRejected
	case hitl.DecisionRespond:
		fmt.Fprintln(stdout, d.Message)
		return exitResponded
	}
	fmt.Fprintf(stderr, "hitl ask: unexpected decision %q\n", d.Decision)
	return exitError
}

// answerValue builds hitl answer's value from its words and flags: with
// --message or --args, a decision object ({"decision": word, …}); else the
// words as JSON when they are JSON, as text otherwise.
func answerValue(words []string, message, args string) (json.RawMessage, error) {
	value := strings.Join(words, " ")
	word := strings.ToLower(strings.TrimSpace(value))
	switch {
	case word == "edit" && args == "":
		return nil, errors.New(`edit needs --args with the edited arguments, as in: hitl answer ID edit --args '{"command": "make test"}'`)
	case word == "respond" && message == "":
		return nil, errors.New("respond needs --message with your reply")
	case message == "" && args == "":
		return jsonOrString(value), nil
	}
	switch word {
	case "approve", "reject", "deny", "edit", "respond":
	default:
		return nil, fmt.Errorf("--message and --args go with approve, reject, edit or respond; got %q", value)
	}
	obj := map[string]any{"decision": word}
	if message != "" {
		obj["message"] = message
	}
	if args != "" {
		raw, err := jsonArg("--args", args)
		if err != nil {
			return nil, err
		}
		obj["args"] = raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}
