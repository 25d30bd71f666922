package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/mcpserver"
	"github.com/hitl-sh/hitl/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An MCP client (here over an in-memory transport; hitl serve offers the
// same server at /mcp and hitl mcp over stdio) calls ask_human, and the
// call returns once a person answers.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "hitl")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(filepath.Join(dir, "hitl.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	b := broker.New(store, nil)
	ctx := context.Background()
	if err := b.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	// A person answers each question as it arrives.
	b.Observe(func(ev *hitl.Event) {
		if ev.Type == hitl.EventCreated {
			go func() {
				person := hitl.WithCaller(ctx, hitl.Caller{Name: "alice", Role: hitl.RoleResponder, Channel: hitl.ChannelWeb})
				if _, err := b.Respond(person, ev.InteractionID, json.RawMessage(`"yes"`)); err != nil {
					log.Fatal(err)
				}
			}()
		}
	})

	srv := mcpserver.New(b, &mcpserver.Options{Version: "example"})
	clientSide, serverSide := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverSide)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "my-agent", Version: "1.0"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_human", Arguments: map[string]any{
		"question": "Deploy build 1432 to production?", "interaction_type": "approval",
	}})
	if err != nil {
		log.Fatal(err)
	}
	var answer struct {
		Status      string `json:"status"`
		Value       any    `json:"value"`
		RespondedBy string `json:"responded_by"`
		Channel     string `json:"channel"`
	}
	out, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(out, &answer); err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer.Status, answer.Value, "by", answer.RespondedBy, "via", answer.Channel)
	// Output: answered true by alice via web
}
