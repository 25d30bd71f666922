package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHandoffToHuman: handoff_to_human returns at once with the handoff's
// id, before anyone replied; the person's reply then reaches whoever
// waits for it.
func TestHandoffToHuman(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			s := k.connect(t, f)
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tools.HandoffName, Arguments: map[string]any{
				"message":    "The customer wants a refund above my limit.",
				"context":    "Order 1432, 240 EUR.",
				"session_id": "chat-12",
			}})
			if err != nil {
				t.Fatalf("call tool: %v", err)
			}
			if res.IsError {
				t.Fatalf("tool error: %v", res.Content)
			}
			var out struct {
				InteractionID string `json:"interaction_id"`
				Status        string `json:"status"`
				Deadline      string `json:"deadline"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &out); err != nil || out.InteractionID == "" || out.Status != "pending" || out.Deadline == "" {
				t.Fatalf("structured content %s (%v); want the pending handoff's id and deadline", b, err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !strings.Contains(text, out.InteractionID) || !strings.Contains(text, "Stop here") {
				t.Errorf("text %q; want the id and to stop", text)
			}
			in, err := f.person.Get(context.Background(), out.InteractionID)
			if err != nil {
				t.Fatal(err)
			}
			if in.Type != hitl.TypeHandoff || in.Status != hitl.StatusPending || in.SessionID != "chat-12" || in.CreatedVia != hitl.ChannelMCP || in.SourceAgent != clientName {
				t.Fatalf("created %s %s session %q via %s by %q; want a pending handoff of chat-12 via mcp by %s", in.Type, in.Status, in.SessionID, in.CreatedVia, in.SourceAgent, clientName)
			}
			if _, err := f.person.Respond(context.Background(), in.ID, json.RawMessage(`"I'll approve it, one moment."`)); err != nil {
				t.Fatalf("respond: %v", err)
			}
			reply, err := f.person.WaitReply(context.Background(), in.ID)
			if err != nil || reply != "I'll approve it, one moment." {
				t.Errorf("WaitReply: %q, %v; want the reply", reply, err)
			}

			// A missing message is a tool error the model can read.
			res, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: tools.HandoffName, Arguments: map[string]any{"context": "x"}})
			if err != nil || !res.IsError {
				t.Fatalf("without a message: %v %+v; want a tool error", err, res)
			}
		})
	}
}
