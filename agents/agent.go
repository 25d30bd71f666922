// Package agents holds the hook dialects of the coding agents hitl reviews
// through command hooks, one file per agent: Codex (codex.go), Gemini CLI
// (gemini.go), Copilot CLI (copilot.go), OpenCode (opencode.go, through
// a plugin that runs the hook), Cursor (cursor.go) and Cline (cline.go).
// Each reads its agent's hook input into a tools.ToolCall, with the call's
// kind, and renders a
// tools.Verdict in the shape the agent reads. Nothing here decides:
// tools.Review asks the engine, whose rules apply the same to every agent.
// (Claude Code's dialect is in package tools, beside its MCP permission
// prompt.)
//
// Every one of them runs a call when its hook fails in some way (Codex
// and Gemini CLI when it exits 1, prints what they cannot read, crashes
// or outlives its timeout; Copilot CLI when it prints what it cannot read
// or outlives its timeout; Cline unless it prints a cancel, whatever its
// exit status), so a hook answers every failure of hitl with a deny, exit
// status 0, and waits less than its timeout.
package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
)

// MaxInput bounds a hook's input: a file write sends the whole file (a
// call that large is denied: an action's arguments are bounded far
// below).
const MaxInput = 16 << 20

// Exit statuses of a command hook.
const (
	// ExitDecided: a decision is on stdout, a deny whenever hitl could not
	// decide.
	ExitDecided = 0
	// ExitBlocked: there was nothing to decide on (the input is not the
	// hook's, a bad flag); the message is on stderr. Both agents block
	// the call on exit status 2.
	ExitBlocked = 2
)

// Agent is one coding agent's hook dialect.
type Agent struct {
	// Name is the agent in hitl: the source_agent of its questions (and
	// so of the rules made from them) unless configured otherwise, and
	// the argument of hitl hook.
	Name string
	// Display names the agent for a person.
	Display string
	// Event is the hook event hitl answers.
	Event string
	// CanAsk reports whether the agent does something with "ask": leave
	// the call to its own prompt.
	CanAsk bool

	parse  func(data []byte) (tools.ToolCall, error)
	output func(v *tools.Verdict, onError tools.OnError) []byte
}

// The agents, by name.
var agents = map[string]*Agent{Codex.Name: Codex, Gemini.Name: Gemini, Copilot.Name: Copilot, "copilot": Copilot, OpenCode.Name: OpenCode, Cursor.Name: Cursor, Cline.Name: Cline}

// Lookup returns the agent named name ("codex", "gemini-cli",
// "copilot-cli" or "copilot", "opencode", "cursor").
func Lookup(name string) (*Agent, bool) {
	a, ok := agents[name]
	return a, ok
}

// ToolCall reads the agent's hook input. It fails (code hitl.EINVALID)
// when data is not the input of the agent's Event hook. What is wrong with
// the call itself (no tool name, an input that is not an object) is left
// to tools.Review, which denies it.
func (a *Agent) ToolCall(data []byte) (tools.ToolCall, error) {
	return a.parse(data)
}

// Output renders v as the hook's standard output: the call allowed (with
// the edited input after an edit), or denied with the reason, which the
// agent hands the model. When nobody decided and onError is
// tools.OnErrorAsk, it leaves the call to the agent's own prompt, where
// the agent has one (CanAsk).
func (a *Agent) Output(v *tools.Verdict, onError tools.OnError) []byte {
	if !a.CanAsk {
		onError = tools.OnErrorDeny
	}
	return a.output(checked(v), onError)
}

// Options configure Hook. The zero value (or nil) is usable.
type Options struct {
	tools.ReviewOptions
	// OnError is what to answer when hitl cannot decide; "" means
	// tools.OnErrorDeny. It is ignored for an agent that cannot ask.
	OnError tools.OnError
	// WaitAtMost, when positive, bounds how long the hook waits for the
	// person: a call still undecided then is denied with a reason saying
	// the question is still open in hitl (for the whole Timeout), and the
	// same call made again (the same tool and input in the session)
	// finds it, and its answer.
	WaitAtMost time.Duration
}

// Hook answers one hook of the agent whose input is data: it reviews the
// call through svc and returns the hook's output and the verdict. The
// source agent defaults to a.Name. err is not nil only when data is not
// the hook's input; out then denies the call all the same, and the hook
// should exit ExitBlocked. A panic is a deny too.
func (a *Agent) Hook(ctx context.Context, svc hitl.Service, data []byte, opts *Options) (out []byte, v *tools.Verdict, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.SourceAgent == "" {
		o.SourceAgent = a.Name
	}
	tool := "tool"
	defer func() {
		if p := recover(); p != nil {
			v = &tools.Verdict{Failed: true, Err: fmt.Errorf("panic: %v", p),
				Reason: fmt.Sprintf("hitl could not get a decision on this %s call, so it is denied: hitl hook crashed (%v).", tool, p)}
			out, err = a.Output(v, o.OnError), nil
		}
	}()
	call, err := a.ToolCall(data)
	if err != nil {
		v = unreadable(err)
		return a.Output(v, tools.OnErrorDeny), v, err
	}
	if call.Tool != "" {
		tool = call.Tool
	}
	if o.WaitAtMost > 0 {
		call.CallKey = tools.InputKey(call.Tool, call.Input)
		v = tools.ReviewDeferring(ctx, svc, call, &o.ReviewOptions, o.WaitAtMost)
	} else {
		v = tools.Review(ctx, svc, call, &o.ReviewOptions)
	}
	return a.Output(v, o.OnError), v, nil
}

// Run answers one command hook: its input on stdin, the decision on
// stdout, what went wrong on stderr. It returns the exit status: always
// ExitDecided once there is a call to decide on (every failure of hitl
// is a deny), ExitBlocked when the input is not the hook's (with a deny on
// stdout as well, which Gemini CLI prefers to the exit status).
func (a *Agent) Run(ctx context.Context, svc hitl.Service, stdin io.Reader, stdout, stderr io.Writer, opts *Options) int {
	prefix := "hitl hook " + a.Name + ": "
	data, err := io.ReadAll(io.LimitReader(stdin, MaxInput+1))
	switch {
	case err != nil:
		err = hitl.Errorf(hitl.EINVALID, "read the hook input: %v", err)
	case len(data) > MaxInput:
		err = hitl.Errorf(hitl.EINVALID, "the hook input is larger than %d bytes", MaxInput)
	}
	var out []byte
	var v *tools.Verdict
	if err == nil {
		out, v, err = a.Hook(ctx, svc, data, opts)
	} else {
		v = unreadable(err)
		out = a.Output(v, tools.OnErrorDeny)
	}
	fmt.Fprintln(stdout, string(out))
	if err != nil {
		fmt.Fprintln(stderr, prefix+hitl.ErrorMessage(err))
		return ExitBlocked
	}
	if v.Failed {
		fmt.Fprintln(stderr, prefix+v.Reason)
	}
	return ExitDecided
}

// unreadable is the verdict on a hook input that cannot be read: a deny.
func unreadable(err error) *tools.Verdict {
	return &tools.Verdict{Failed: true, Err: err, Reason: "hitl could not read this hook's input, so the call is denied: " + hitl.ErrorMessage(err) + "."}
}

// object decodes data as a JSON object into v, failing (code
// hitl.EINVALID) when it is not one; agent names the hook for the message.
func object(data []byte, v any, agent string) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return hitl.Errorf(hitl.EINVALID, "the hook input is not a JSON object; run this as %s's hook, which sends one", agent)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return hitl.Errorf(hitl.EINVALID, "the hook input is not valid JSON: %v", err)
	}
	return nil
}

// checkEvent fails (code hitl.EINVALID) unless got is the event want.
func checkEvent(got, want string) error {
	switch got {
	case want:
		return nil
	case "":
		return hitl.Errorf(hitl.EINVALID, "the hook input has no hook_event_name")
	}
	return hitl.Errorf(hitl.EINVALID, "hitl answers the %s hook, not %s: configure it under %s", want, got, want)
}

// checked returns v, or a deny in its place when its edited input is not
// a JSON object (a verdict must always encode), or when it is deferred:
// these agents know no "defer", and the reason says the question is
// still open.
func checked(v *tools.Verdict) *tools.Verdict {
	if v.Deferred {
		return &tools.Verdict{Reason: v.Reason, Interaction: v.Interaction}
	}
	if v.UpdatedInput == nil || json.Valid(v.UpdatedInput) && bytes.HasPrefix(bytes.TrimSpace(v.UpdatedInput), []byte("{")) {
		return v
	}
	return &tools.Verdict{Failed: true, Reason: "hitl could not get a decision on this call, so it is denied: the edited input is not a JSON object.", Interaction: v.Interaction}
}

// marshal encodes v as compact JSON without HTML escaping (the reason is
// read by a model and a person, not a browser).
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only values made here are encoded; none can fail.
		panic(fmt.Sprintf("agents: encode %T: %v", v, err))
	}
	return bytes.TrimSpace(buf.Bytes())
}
