package tools

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
)

// Claude Code's permission relay (2.1.81 and later): an MCP server that
// declares the experimental capabilities ChannelCapability and
// ChannelPermissionCapability, in a session started with --channels (or
// --dangerously-load-development-channels), is sent
// MethodChannelPermissionRequest whenever Claude Code shows a permission
// prompt, and may answer it with MethodChannelPermission. The first answer,
// the terminal's or the channel's, wins. Claude Code tells the channel
// nothing when the prompt is answered at the terminal.
const (
	ChannelCapability              = "claude/channel"
	ChannelPermissionCapability    = "claude/channel/permission"
	MethodChannelPermissionRequest = "notifications/claude/channel/permission_request"
	MethodChannelPermission        = "notifications/claude/channel/permission"
)

// The two behaviors a channel may answer a permission request with.
const (
	ChannelAllow = "allow"
	ChannelDeny  = "deny"
)

// ChannelPermissionRequest is the params of Claude Code's
// notifications/claude/channel/permission_request.
type ChannelPermissionRequest struct {
	// RequestID names the prompt in the answer; five lower-case letters,
	// drawn per prompt, unique within a Claude Code session only.
	RequestID string `json:"request_id"`
	// ToolName is the tool the prompt is about: Bash, Write, mcp__…
	ToolName string `json:"tool_name"`
	// Description is what the prompt says the call does.
	Description string `json:"description"`
	// InputPreview is the tool's input as Claude Code previews it for a
	// chat: JSON-like text, possibly shortened ("⋯ N code points elided
	// ⋯") and with secrets redacted. It is not the input the tool runs
	// with, and is never read as one.
	InputPreview string `json:"input_preview"`
}

// ChannelPermission is the params of the answer a channel sends,
// notifications/claude/channel/permission.
type ChannelPermission struct {
	RequestID string `json:"request_id"`
	Behavior  string `json:"behavior"`
}

// ChannelPermissionVia names the surface in the question's context and
// metadata.
const ChannelPermissionVia = "channel permission relay"

// Request returns the action question for r: the tool by name, the
// preview as text (args {"input_preview": …}), approve or reject only (an
// edit cannot be sent back). connection scopes the idempotency key: a
// request_id is unique only within one Claude Code session, so it is the
// MCP connection's own id; session is the MCP session's id, "" when the
// transport has none (stdio).
func (r ChannelPermissionRequest) Request(agent, connection, session string, timeout time.Duration) (hitl.CreateRequest, error) {
	if strings.TrimSpace(r.RequestID) == "" {
		return hitl.CreateRequest{}, hitl.Errorf(hitl.EINVALID, "the permission request has no request_id")
	}
	if strings.TrimSpace(r.ToolName) == "" {
		return hitl.CreateRequest{}, hitl.Errorf(hitl.EINVALID, "the permission request has no tool_name")
	}
	if agent == "" {
		agent = ClaudeCodeAgent
	}
	preview := clip(r.InputPreview, hitl.MaxActionArgsLen/2)
	args, _ := json.Marshal(map[string]string{"input_preview": preview})
	return hitl.CreateRequest{
		Type: hitl.TypeAction,
		Action: &hitl.Action{
			Name:        clip(r.ToolName, hitl.MaxActionNameLen),
			Args:        args,
			Description: clip(r.Description, hitl.MaxActionDescriptionLen),
		},
		Decisions:      []hitl.Decision{hitl.DecisionApprove, hitl.DecisionReject},
		Context:        r.context(preview),
		Timeout:        timeout.Seconds(),
		SourceAgent:    agent,
		SessionID:      clip(session, hitl.MaxProvenanceLen),
		IdempotencyKey: idempotencyKey(ClaudeCodeAgent+"-channel", connection, strings.ToLower(r.RequestID)),
		Metadata:       map[string]any{"via": ChannelPermissionVia, "request_id": clip(r.RequestID, 64)},
	}, nil
}

// context tells the person what they are deciding: a prompt open at a
// terminal, of which they see a preview.
func (r ChannelPermissionRequest) context(preview string) string {
	var b strings.Builder
	b.WriteString("Claude Code asks to run **" + escapeMarkdown(r.ToolName) + "**")
	b.WriteString(" and is showing its permission prompt at the terminal (asked by its " + ChannelPermissionVia + ").")
	b.WriteString(" Approve or reject here, or answer at the terminal: the first answer wins.")
	b.WriteString("\n\nThe input, as Claude Code previews it (it may be shortened or redacted):\n\n")
	if pretty := indentJSON(preview); pretty != "" {
		preview = pretty
	}
	b.WriteString(fence(preview))
	return b.String()
}

// indentJSON returns s indented when it is a JSON object, else "".
func indentJSON(s string) string {
	var buf bytes.Buffer
	if !strings.HasPrefix(strings.TrimSpace(s), "{") || json.Indent(&buf, []byte(s), "", "  ") != nil {
		return ""
	}
	return buf.String()
}

// fence returns s as a Markdown code block whose fence s cannot close.
func fence(s string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f + "\n" + s + "\n" + f
}

// ChannelBehavior returns what to send Claude Code for in, an ended
// channel question: ChannelAllow only when a person (or a rule) approved
// it, ChannelDeny when it was rejected, "" (send nothing: the terminal
// decides) for anything else: expired, cancelled, still pending, not the
// question asked about tool, or a decision that is not approve or reject.
func ChannelBehavior(in *hitl.Interaction, tool string) string {
	if in == nil || in.Status != hitl.StatusAnswered || in.Result == nil || in.Result.TimedOut ||
		in.Type != hitl.TypeAction || in.Action == nil || in.Action.Name != clip(tool, hitl.MaxActionNameLen) {
		return ""
	}
	var d struct {
		Decision hitl.Decision `json:"decision"`
	}
	if json.Unmarshal(in.Result.Value, &d) != nil {
		return ""
	}
	switch d.Decision {
	case hitl.DecisionApprove:
		return ChannelAllow
	case hitl.DecisionReject:
		return ChannelDeny
	}
	return ""
}
