package server

import (
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
)

// POST /api/v1/hooks/claude-code is a Claude Code HTTP hook ("type":
// "http") for the PreToolUse and PermissionRequest events: the body is the
// hook's input, the response the hook's output, as for the command hook
// (hitl hook claude-code). It is authenticated like the rest of the API:
// Claude Code sends the token in a header of the hook's configuration.
//
// Query parameters: agent (the source_agent rules are scoped to; default
// claude-code), timeout (how long a person has to decide: seconds, or a
// duration such as 540s or 9m; default 540 s, which must stay below the
// hook's own timeout, 600 s by default) and on_error (deny, the default,
// or ask; in any case).
//
// Once the input is a PreToolUse or PermissionRequest hook's, the answer
// is 200 with a decision, a deny when hitl cannot decide (a query
// parameter it cannot read, the question expired or was cancelled, the
// call could not be asked, the request refused before it was read: see
// hookrefusal.go). Claude Code
// ignores a hook that fails (any other status, a timeout, a refused
// connection: the call then runs as if there were no hook), so only
// requests that are not such a hook's input get an error status, and a
// server that is down cannot deny anything: where that matters, use the
// command hook, which denies when it cannot reach hitl.

// maxHookBody bounds the hook's input hitl reads: a Write of a large file
// sends the whole file. Up to it, a call too large for an action
// (hitl.MaxActionArgsLen) is denied; beyond it, the call is denied too
// when the input's start names a PreToolUse or PermissionRequest hook
// (see hookTooLarge), and the request is refused (413) otherwise.
const maxHookBody = 8 << 20

// maxHookDrain bounds what hitl reads past maxHookBody and discards, so
// that Claude Code, done sending, reads the deny: a client still sending
// when the server closes may see the connection reset instead, a failure
// on which it runs the call.
const maxHookDrain = 256 << 20

// claudeCodeHookPath is the Claude Code HTTP hook's path.
const claudeCodeHookPath = "/api/v1/hooks/claude-code"

// handleClaudeCodeHook serves POST /api/v1/hooks/claude-code.
func (s *Server) handleClaudeCodeHook(w http.ResponseWriter, r *http.Request) error {
	data, err := readHookBody(w, r)
	if hitl.ErrorCode(err) == hitl.ETOOLARGE && s.hookTooLarge(w, r, data, err) {
		return nil
	}
	if err != nil {
		return err
	}
	in, err := tools.ParseHookInput(data)
	if err != nil {
		return err
	}
	if err := in.Supported(); err != nil {
		return err
	}
	// From here on the body is a hook's input: every problem is a deny.
	start := time.Now()
	var (
		out []byte
		v   *tools.Verdict
	)
	if opts, err := hookOptions(r); err != nil {
		v = in.ToolCall().Refuse(err)
		out = tools.HookOutput(in.HookEventName, v, tools.OnErrorDeny)
	} else {
		// Claude Code runs the call on this answer: no receipt to sign.
		out, v = tools.Hook(r.Context(), s.broker.Unreceipted(), in, opts)
	}
	s.logHook(r, in, v, time.Since(start))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(out, '\n'))
	return nil
}

// hookOptions reads the hook's query parameters. on_error is read without
// regard to case; timeout is a number of seconds, or a duration such as
// 540s or 9m (the command hook's --timeout syntax).
func hookOptions(r *http.Request) (*tools.HookOptions, error) {
	q := r.URL.Query()
	o := &tools.HookOptions{OnError: tools.OnErrorDeny}
	o.SourceAgent = q.Get("agent")
	if v := q.Get("on_error"); v != "" {
		o.OnError = tools.OnError(strings.ToLower(strings.TrimSpace(v)))
		if !o.OnError.Valid() {
			return nil, hitl.Errorf(hitl.EINVALID, "the hook's query parameter on_error must be deny or ask, not %q", v)
		}
	}
	if v := q.Get("timeout"); v != "" {
		d, err := hookTimeout(v)
		if err != nil {
			return nil, err
		}
		o.Timeout = d
	}
	return o, nil
}

// hookTimeout reads the timeout query parameter: seconds, or a Go
// duration, between a second and hitl.MaxTimeout.
func hookTimeout(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	var d time.Duration
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(secs) || math.IsInf(secs, 0) {
			return 0, hitl.Errorf(hitl.EINVALID, "the hook's query parameter timeout must be a number of seconds, not %q", v)
		}
		d = time.Duration(min(max(secs, -1), hitl.MaxTimeout.Seconds()+1) * float64(time.Second))
	} else if d, err = time.ParseDuration(v); err != nil {
		return 0, hitl.Errorf(hitl.EINVALID, "the hook's query parameter timeout must be a number of seconds or a duration such as 540s or 9m, not %q", v)
	}
	if d < time.Second || d > hitl.MaxTimeout {
		return 0, hitl.Errorf(hitl.EINVALID, "the hook's query parameter timeout must be between 1s and %s (below the hook's own timeout), not %q", hitl.MaxTimeout, v)
	}
	return d, nil
}

// readHookBody reads a hook's input: at most maxHookBody, within the body's
// read deadline (see bodyDeadline). When the input is larger it returns
// what it read, its first maxHookBody bytes, with an ETOOLARGE error.
func readHookBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxHookBody))
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return data, nil
	case errors.As(err, &tooBig):
		return data, hitl.Errorf(hitl.ETOOLARGE, "the hook input is larger than %d bytes", maxHookBody)
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		return nil, hitl.Errorf(codeTimeout, "the request body did not arrive in time")
	}
	return nil, hitl.Errorf(hitl.EINVALID, "read request body: %v", err)
}

// logHook logs a hook's decision, never the call's input or the reason.
func (s *Server) logHook(r *http.Request, in *tools.HookInput, v *tools.Verdict, took time.Duration) {
	decision := "deny"
	if v.Allow {
		decision = "allow"
	}
	attrs := []any{"event", in.HookEventName, "tool", in.ToolName, "decision", decision, "failed", v.Failed, "duration_ms", took.Milliseconds()}
	if v.Interaction != nil {
		attrs = append(attrs, "interaction_id", v.Interaction.ID, "status", v.Interaction.Status)
	}
	level := slog.LevelInfo
	if v.Err != nil && hitl.ErrorCode(v.Err) == hitl.EINTERNAL && r.Context().Err() == nil {
		level = slog.LevelError
		attrs = append(attrs, "error", v.Err)
	}
	s.log.Log(r.Context(), level, "claude code hook", attrs...)
}
