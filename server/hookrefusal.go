package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
)

// Claude Code runs a call when its HTTP hook fails: any status but 200. So
// a request to the hook endpoint that is refused before its handler reads
// it (missing or revoked credentials, a host or origin refused, too many
// requests, a database that does not answer) is still answered 200 with a
// deny that names the refusal, once its body is a PreToolUse or
// PermissionRequest hook's input. Nothing about the call is decided or
// recorded, and the deny tells nothing the error would not.

// hookRefused writes err as the hook's deny and reports true, when r is a
// request to the Claude Code hook endpoint whose unread body is a hook's
// input; otherwise it writes nothing and reports false.
func (s *Server) hookRefused(w http.ResponseWriter, r *http.Request, err error) bool {
	if r.Method != http.MethodPost || r.URL.Path != claudeCodeHookPath || r.Body == nil {
		return false
	}
	data, rerr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxHookBody))
	if rerr != nil {
		return false
	}
	in, perr := tools.ParseHookInput(data)
	if perr != nil || in.Supported() != nil {
		return false
	}
	v := in.ToolCall().Refuse(err)
	s.log.Info("claude code hook refused", "event", in.HookEventName, "tool", in.ToolName, "code", hitl.ErrorCode(err))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(tools.HookOutput(in.HookEventName, v, tools.OnErrorDeny), '\n'))
	return true
}

// hookTooLarge answers a hook's input larger than maxHookBody with a deny
// and reports true, when prefix, its first maxHookBody bytes, names a
// PreToolUse or PermissionRequest hook (hook_event_name comes before the
// tool's input in what Claude Code sends); otherwise it writes nothing and
// reports false. The rest of the body is read and discarded first (up to
// maxHookDrain).
func (s *Server) hookTooLarge(w http.ResponseWriter, r *http.Request, prefix []byte, err error) bool {
	event := hookEventName(prefix)
	if event != tools.HookPreToolUse && event != tools.HookPermissionRequest {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxHookDrain))
	v := &tools.Verdict{Failed: true, Err: err,
		Reason: "hitl could not get a decision on this call, so it is denied: " + hitl.ErrorMessage(err) + "."}
	s.log.Info("claude code hook input too large", "event", event, "code", hitl.ETOOLARGE)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(tools.HookOutput(event, v, tools.OnErrorDeny), '\n'))
	return true
}

// hookEventName returns the top-level hook_event_name of data, a JSON
// object's start that may be cut anywhere, or "" when it is not found.
func hookEventName(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return ""
		}
		if t == "hook_event_name" {
			var name string
			if json.Unmarshal(v, &name) != nil {
				return ""
			}
			return name
		}
	}
	return ""
}
