package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/sqlite"
)

// An agent asks a yes/no question through a remote server (with ask.Ask,
// which works over the client as over the in-process engine) and a person
// answers it from another client.
func Example() {
	// A throwaway server; in real use this is `hitl serve`.
	store, _ := sqlite.Open(":memory:", nil)
	defer store.Close()
	b := broker.New(store, nil)
	_ = b.Start(context.Background())
	defer b.Close()
	ts := httptest.NewServer(server.New(b, nil).Handler())
	defer ts.Close()

	// A person answers whatever is pending once the agent waits.
	person := client.New(ts.URL, &client.Options{Channel: hitl.ChannelWeb})
	b.Observe(func(ev *hitl.Event) {
		if ev.Type == hitl.EventCreated {
			go person.Respond(context.Background(), ev.InteractionID, json.RawMessage(`"approve"`))
		}
	})

	agent := client.New(ts.URL, nil)
	in, err := ask.Ask(context.Background(), agent, hitl.CreateRequest{
		Type:     hitl.TypeApproval,
		Question: "Deploy v1.2 to production?",
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(in.Status, string(in.Result.Value), in.Result.Channel)
	// Output: answered true web
}
