package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/sqlite"
)

// An agent asks, a person answers from elsewhere, and the agent's Wait
// returns the typed, validated answer.
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
	if err := b.Start(ctx); err != nil { // deadlines that passed while stopped fire now
		log.Fatal(err)
	}
	defer b.Close()

	in, _, err := b.Create(ctx, hitl.CreateRequest{
		Type:     hitl.TypeSingleChoice,
		Question: "Which environment?",
		Options:  []hitl.Option{{Key: "staging", Label: "Staging"}, {Key: "prod", Label: "Production"}},
		Timeout:  600,
	})
	if err != nil {
		log.Fatal(err)
	}

	// A person answers with a label; the engine records its key.
	go func() {
		person := hitl.WithCaller(ctx, hitl.Caller{Name: "alice", Role: hitl.RoleResponder, Channel: hitl.ChannelWeb})
		if _, err := b.Respond(person, in.ID, json.RawMessage(`"Production"`)); err != nil {
			log.Fatal(err)
		}
	}()

	done, err := b.Wait(ctx, in.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(done.Status, string(done.Result.Value), done.Result.RespondedBy, done.Result.Channel)
	// Output: answered "prod" alice web
}
