package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/sqlite"
)

// A question is stored, answered exactly once, and the second answer is
// refused with the first one's result.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "hitl")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, "hitl.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	ctx := context.Background()
	now := time.Now()
	in, err := hitl.NewInteraction(hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Deploy?"},
		hitl.Caller{Name: "deploy-bot", Channel: hitl.ChannelAPI}, now)
	if err != nil {
		log.Fatal(err)
	}
	in, _, _, err = s.CreateInteraction(ctx, in)
	if err != nil {
		log.Fatal(err)
	}
	out, ev, err := s.Resolve(ctx, in.ID, hitl.Transition{
		Status: hitl.StatusAnswered, Value: []byte("true"), By: "alice", Via: hitl.ChannelWeb, At: now,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Status, string(out.Result.Value), ev.Type)

	_, _, err = s.Resolve(ctx, in.ID, hitl.Transition{Status: hitl.StatusCancelled, At: now})
	fmt.Println(err)
	// Output:
	// answered true answered
	// interaction is not pending
}
