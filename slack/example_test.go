package slack_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/slack"
	"github.com/hitl-sh/hitl/sqlite"
)

// The Slack channel over an engine, configured from the environment (as
// hitl serve's HITL_SLACK_* variables do): secrets are only ever shown
// masked, and a signing secret means Slack reaches hitl over HTTP (mount
// EventsHandler and InteractivityHandler). Disabled here, it posts nothing.
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

	off, delay := false, 120
	svc, err := slack.New(b, store, &slack.Options{Settings: slack.Settings{
		Enabled:       &off,
		BotToken:      "xoxb-0000-1111-abcd1234",
		SigningSecret: "8f742231b10e8888abcd99yyyzzz85a5",
		ChannelID:     "C0123456789",
		DelaySeconds:  &delay,
	}})
	if err != nil {
		log.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer svc.Close()

	view, err := svc.Config(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(view.Enabled, view.Transport, view.ChannelID, view.DelaySeconds)
	fmt.Println(view.BotToken, view.SigningSecret)
	// Output:
	// false http C0123456789 120
	// xoxb-...1234 ...85a5
}
