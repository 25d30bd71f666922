package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
	"github.com/hitl-sh/hitl/client"
)

// Exit codes of hitl ask (and of the other client commands on error).
const (
	exitAnswered  = 0 // answered; for approval, approved
	exitRejected  = 1 // approval rejected
	exitExpired   = 2 // no answer before the deadline
	exitCancelled = 3 // cancelled, on the server or by Ctrl-C
	exitError     = 4 // bad flags, server unreachable, invalid request
	// exitResponded (5, an action answered with a reply) is in action.go.
)

// defaultServerURL is where the client commands look for the server.
const defaultServerURL = "http://127.0.0.1:7878"

// cancelTimeout bounds the cancel request sent after Ctrl-C.
const cancelTimeout = 5 * time.Second

// newClient returns a client for the server at base, answering on the cli
// channel, with the token from HITL_TOKEN if set.
func newClient(base string) *client.Client {
	return client.New(base, &client.Options{Channel: hitl.ChannelCLI, Token: os.Getenv("HITL_TOKEN")})
}

// serverFlag adds the --server flag every client command has.
func serverFlag(fs *flag.FlagSet) *string {
	return fs.String("server", envOr("HITL_URL", defaultServerURL), "hitl server `URL` (HITL_URL)")
}

// runAsk asks a question, waits for the answer and prints it.
func runAsk(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("ask", `hitl ask [flags] "question"`,
		"Asks a person a question through the hitl server and blocks until it is\n"+
			"answered, then prints the answer on stdout: the text for free_text, the\n"+
			"option key for single_choice, JSON for multi_choice and form, and\n"+
			"\"approved\" or \"rejected\" for approval.\n\n"+
			actionHelp+"\n\n"+
			"Exit codes: 0 answered (approval: approved; action: approved or edited),\n"+
			"1 rejected, 2 expired, 3 cancelled (on the server, or Ctrl-C, which\n"+
			"cancels it there too), 4 error (bad flags, server unreachable, invalid\n"+
			"request), 5 an action answered with a reply instead.\n\n"+
			"HITL_TOKEN, if set, is sent as a bearer token.", stderr)
	f := addAskFlags(fs)
	base := serverFlag(fs)
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "hitl ask: "+format+"\n", a...)
		return exitError
	}
	req, err := f.request(strings.TrimSpace(strings.Join(fs.Args(), " ")))
	if err != nil {
		return fail("%v", err)
	}

	c := newClient(*base)
	in, err := ask.Create(ctx, c, req)
	if err != nil {
		if ctx.Err() != nil {
			return interruptedCreate(in, stderr)
		}
		return fail("%s", errText(err))
	}

	stop := func() {}
	if isTerminal(stderr) {
		stop = countdown(stderr, in)
	}
	got, err := c.Wait(ctx, in.ID)
	stop()
	switch {
	case err != nil && ctx.Err() != nil:
		return interrupted(ctx, c, in.ID, stderr)
	case err != nil:
		return fail("%s", errText(err))
	}
	return printOutcome(got, stdout, stderr)
}

// askFlags are hitl ask's flags that make the question.
type askFlags struct {
	typ, schemaFile, contextText, def, onTimeout, key, agent *string
	escalation                                               *string
	timeout                                                  *time.Duration
	options                                                  hitl.OptionList
	action                                                   actionFlags
}

// addAskFlags defines hitl ask's question flags on fs.
func addAskFlags(fs *flag.FlagSet) *askFlags {
	f := &askFlags{}
	f.typ = fs.String("type", "", "interaction `type`: approval, single_choice, multi_choice, form, free_text or action\n(default free_text; single_choice with --option, form with --schema, action with --action-name)")
	fs.Func("option", "a choice as `key=label`, or just a label (its key is derived); repeatable", func(s string) error {
		o, err := parseOption(s)
		if err == nil {
			f.options = append(f.options, o)
		}
		return err
	})
	f.schemaFile = fs.String("schema", "", "JSON Schema `file` for a form (- reads stdin)")
	f.contextText = fs.String("context", "", "supporting `text` shown with the question (Markdown)")
	f.def = fs.String("default", "", "default `value` (JSON, or else text), pre-filled for the person and\nthe answer with --on-timeout default")
	f.timeout = fs.Duration("timeout", 0, "how long to wait for an answer, e.g. 5m (default: the server's, 1h)")
	f.onTimeout = fs.String("on-timeout", "", "at the deadline: cancel (exit 2) or default (answer with --default)")
	f.key = fs.String("id", "", "idempotency `key`: asking again with the same key and question waits on\nthe same interaction (default: a new random key, so that an interrupted\nask can find its question and cancel it: see ask.Create)")
	f.agent = fs.String("agent", envOr("HITL_AGENT", ""), "agent `name` shown to the person (HITL_AGENT)")
	f.escalation = fs.String("escalation", "", "reminders and escalation as `JSON`, such as\n'[{\"after\":\"10m\",\"remind\":true}]' ([] opts out of the server's default)")
	f.action.register(fs)
	return f
}

// request makes the create request for question from the flags.
func (f *askFlags) request(question string) (hitl.CreateRequest, error) {
	req := hitl.CreateRequest{
		Type:           hitl.Type(*f.typ),
		Question:       question,
		Context:        *f.contextText,
		Options:        f.options,
		OnTimeout:      hitl.OnTimeout(*f.onTimeout),
		IdempotencyKey: *f.key,
		SourceAgent:    *f.agent,
	}
	if err := f.action.apply(&req); err != nil {
		return req, err
	}
	if req.Question == "" && req.Type != hitl.TypeAction {
		return req, errors.New("a question is required, as in: hitl ask \"Deploy to production?\"")
	}
	if *f.timeout < 0 {
		return req, errors.New("--timeout must be positive")
	}
	req.Timeout = f.timeout.Seconds()
	if *f.def != "" {
		req.DefaultResponse = jsonOrString(*f.def)
	}
	if *f.escalation != "" {
		if err := json.Unmarshal([]byte(*f.escalation), &req.Escalation); err != nil {
			return req, fmt.Errorf("--escalation must be a JSON list of steps: %v", err)
		}
		if req.Escalation == nil {
			req.Escalation = []hitl.EscalationStep{} // null: no steps either
		}
	}
	if *f.schemaFile != "" {
		schema, err := readSchema(*f.schemaFile)
		if err != nil {
			return req, err
		}
		req.FormSchema = schema
	}
	req.Type = req.InferredType()
	return req, nil
}

// interruptedCreate reports Ctrl-C while the question was being sent:
// ask.Create has found the question again and cancelled it (in), or could
// not reach the server (nil).
func interruptedCreate(in *hitl.Interaction, stderr io.Writer) int {
	switch {
	case in == nil:
		fmt.Fprintln(stderr, "hitl ask: interrupted while asking, and the server could not be reached to cancel the question; if it got it, it is still pending")
	case in.Status == hitl.StatusCancelled:
		fmt.Fprintf(stderr, "hitl ask: interrupted; interaction %s cancelled\n", in.ID)
	default:
		fmt.Fprintf(stderr, "hitl ask: interrupted; interaction %s is already %s\n", in.ID, in.Status)
	}
	return exitCancelled
}

// interrupted cancels the interaction after Ctrl-C and returns exitCancelled.
func interrupted(ctx context.Context, c *client.Client, id string, stderr io.Writer) int {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	if _, err := c.Cancel(cctx, id, hitl.CancelledByAgent); err != nil {
		fmt.Fprintf(stderr, "hitl ask: interrupted, but could not cancel interaction %s: %s\n", id, errText(err))
	} else {
		fmt.Fprintf(stderr, "hitl ask: interrupted; interaction %s cancelled\n", id)
	}
	return exitCancelled
}

// printOutcome prints a terminal interaction's answer (or why there is
// none) and returns the exit code.
func printOutcome(in *hitl.Interaction, stdout, stderr io.Writer) int {
	r := in.Result
	if r == nil {
		r = &hitl.Result{}
	}
	switch in.Status {
	case hitl.StatusExpired:
		fmt.Fprintf(stderr, "hitl ask: no answer before the deadline; interaction %s expired\n", in.ID)
		return exitExpired
	case hitl.StatusCancelled:
		reason := r.Reason
		if reason == "" {
			reason = "no reason given"
		}
		fmt.Fprintf(stderr, "hitl ask: interaction %s was cancelled: %s\n", in.ID, reason)
		return exitCancelled
	case hitl.StatusAnswered:
	default:
		fmt.Fprintf(stderr, "hitl ask: interaction %s is %s, not answered\n", in.ID, in.Status)
		return exitError
	}
	if r.TimedOut {
		fmt.Fprintln(stderr, "hitl ask: no answer before the deadline; using the default response")
	}
	switch in.Type {
	case hitl.TypeAction:
		return printAction(in, stdout, stderr)
	case hitl.TypeApproval:
		var ok bool
		if err := json.Unmarshal(r.Value, &ok); err != nil {
			fmt.Fprintf(stderr, "hitl ask: unexpected approval value %s\n", r.Value)
			return exitError
		}
		if !ok {
			fmt.Fprintln(stdout, "rejected")
			return exitRejected
		}
		fmt.Fprintln(stdout, "approved")
	case hitl.TypeFreeText, hitl.TypeSingleChoice:
		var s string
		if err := json.Unmarshal(r.Value, &s); err != nil {
			fmt.Fprintln(stdout, string(r.Value))
		} else {
			fmt.Fprintln(stdout, s)
		}
	default:
		var buf bytes.Buffer
		if err := json.Compact(&buf, r.Value); err != nil {
			buf.Reset()
			buf.Write(r.Value)
		}
		fmt.Fprintln(stdout, buf.String())
	}
	return exitAnswered
}

// parseOption reads "key=label", or a bare label whose key is derived.
func parseOption(s string) (hitl.Option, error) {
	if strings.TrimSpace(s) == "" {
		return hitl.Option{}, errors.New("option is empty")
	}
	if k, label, ok := strings.Cut(s, "="); ok && strings.TrimSpace(k) != "" && strings.TrimSpace(label) != "" {
		return hitl.Option{Key: strings.TrimSpace(k), Label: strings.TrimSpace(label)}, nil
	}
	label := strings.TrimSpace(strings.TrimPrefix(s, "="))
	return hitl.Option{Key: hitl.DeriveKey(label), Label: label}, nil
}

// jsonOrString returns s when it is valid JSON, else s as a JSON string.
func jsonOrString(s string) json.RawMessage {
	if t := strings.TrimSpace(s); t != "" && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// readSchema reads a JSON Schema from a file, or stdin for "-".
func readSchema(name string) (json.RawMessage, error) {
	var (
		data []byte
		err  error
	)
	if name == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, fmt.Errorf("read --schema: %w", err)
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("--schema %s is not valid JSON", name)
	}
	return json.RawMessage(bytes.TrimSpace(data)), nil
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// countdown shows the time left until the deadline on w, a terminal, once a
// second, until the returned stop is called (which clears the line).
func countdown(w io.Writer, in *hitl.Interaction) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			left := max(time.Until(in.Deadline).Round(time.Second), 0)
			fmt.Fprintf(w, "\r\033[2KWaiting for an answer: %s left (interaction %s; Ctrl-C cancels)", left, in.ID)
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[2K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}
