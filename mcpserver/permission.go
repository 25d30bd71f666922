package mcpserver

import (
	"context"
	"log/slog"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// permissionPrompt serves the permission_prompt tool for Claude Code's
// --permission-prompt-tool mcp__hitl__permission_prompt: the result is one
// text item holding the decision's JSON, and never a tool error, so that
// the deny's message reaches the model verbatim (a tool error denies too,
// but Claude Code does not list it among the run's permission denials).
func (s *Server) permissionPrompt(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	caller := hitl.CallerFrom(ctx)
	caller.Channel = hitl.ChannelMCP
	ctx = hitl.WithCaller(ctx, caller)
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		stop := s.reportProgress(ctx, req.Session, tok)
		defer stop()
	}
	start := time.Now()
	var toolUseID string
	if id, ok := req.Params.GetMeta()[tools.PermissionPromptMetaKey].(string); ok {
		toolUseID = id
	}
	d, v := tools.CallPermissionPrompt(ctx, s.svc, req.Params.Arguments, toolUseID, &tools.ReviewOptions{SourceAgent: s.sourceAgent(req)})
	s.logPermission(ctx, d, v, time.Since(start))
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: d.Text()}}}, nil
}

// logPermission logs a permission prompt's decision, never its input or
// message.
func (s *Server) logPermission(ctx context.Context, d tools.PermissionDecision, v *tools.Verdict, took time.Duration) {
	attrs := []any{"tool", tools.PermissionPromptName, "behavior", d.Behavior, "failed", v.Failed, "duration_ms", took.Milliseconds()}
	if in := v.Interaction; in != nil {
		attrs = append(attrs, "interaction_id", in.ID, "status", in.Status)
	}
	level := slog.LevelInfo
	if v.Err != nil && hitl.ErrorCode(v.Err) == hitl.EINTERNAL && ctx.Err() == nil {
		level = slog.LevelError
		attrs = append(attrs, "error", v.Err)
	}
	s.log.Log(ctx, level, "mcp tool call", attrs...)
}
