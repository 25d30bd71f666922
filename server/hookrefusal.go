package server

import (
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
