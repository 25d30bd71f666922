package ask_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/sqlite"
)

// startExampleEngine starts an in-process engine over a SQLite file in a
// temporary directory, with a person who answers the questions in turn
// with answers (JSON values) as soon as they are asked, printing each
// question first; nobody answers once the answers run out. In real use the
// engine runs in your process (or behind `hitl serve`, reached with
// client.New) and people answer from the web inbox, the CLI or Slack.
func startExampleEngine(answers ...string) (*broker.Broker, func()) {
	dir, err := os.MkdirTemp("", "hitl-example-")
	if err != nil {
		panic(err)
	}
	store, err := sqlite.Open(filepath.Join(dir, "hitl.db"), nil)
	if err != nil {
		panic(err)
	}
	b := broker.New(store, nil)
	if err := b.Start(context.Background()); err != nil {
		panic(err)
	}
	person := hitl.WithCaller(context.Background(), hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb})
	var asked atomic.Int32
	b.Observe(func(ev *hitl.Event) {
		if ev.Type != hitl.EventCreated {
			return
		}
		n := int(asked.Add(1))
		if n > len(answers) {
			return
		}
		in, answer := ev.Interaction, answers[n-1]
		go func() {
			fmt.Printf("alice sees %s: %s\n", in.Type, in.Question)
			if _, err := b.Respond(person, in.ID, json.RawMessage(answer)); err != nil {
				fmt.Println("respond:", err)
			}
		}()
	})
	return b, func() {
		b.Close()
		store.Close()
		os.RemoveAll(dir)
	}
}

func ExampleText() {
	engine, stop := startExampleEngine(`"582491"`)
	defer stop()

	code, err := ask.Text(context.Background(), engine, "Enter the 6-digit code sent to your email", nil)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("code:", code)
	// Output:
	// alice sees free_text: Enter the 6-digit code sent to your email
	// code: 582491
}

func ExampleYesNo() {
	engine, stop := startExampleEngine(`"Deploy"`) // the label of the yes button
	defer stop()

	ok, err := ask.YesNo(context.Background(), engine, "Deploy build 1432 to production?", "Deploy", "Hold", nil)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("deploy:", ok)
	// Output:
	// alice sees approval: Deploy build 1432 to production?
	// deploy: true
}

func ExampleChoice() {
	engine, stop := startExampleEngine(`"production"`)
	defer stop()

	key, i, err := ask.Choice(context.Background(), engine, "Which environment?", []string{"Staging", "Production"}, nil)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(key, i)
	// Output:
	// alice sees single_choice: Which environment?
	// production 1
}

func ExampleChoices() {
	engine, stop := startExampleEngine(`["lint", "e2e_tests"]`)
	defer stop()

	keys, indexes, err := ask.Choices(context.Background(), engine, "Which checks may be skipped?", []string{"Lint", "Unit tests", "E2E tests"}, nil)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(keys, indexes)
	// Output:
	// alice sees multi_choice: Which checks may be skipped?
	// [lint e2e_tests] [0 2]
}

func ExampleForm() {
	engine, stop := startExampleEngine(`{"version": "1.4.0", "notes": "Faster search", "canary": true}`)
	defer stop()

	// The form is the struct's JSON Schema; the answer comes back decoded.
	type Release struct {
		Version string `json:"version" jsonschema:"semantic version to tag"`
		Notes   string `json:"notes,omitempty" jsonschema:"one line for the changelog"`
		Canary  bool   `json:"canary" jsonschema:"roll out to 5% first"`
	}
	rel, err := ask.Form[Release](context.Background(), engine, "Release details?", &ask.Options{
		Default: Release{Version: "1.4.0", Canary: true}, // pre-filled for the person
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("%+v\n", rel)
	// Output:
	// alice sees form: Release details?
	// {Version:1.4.0 Notes:Faster search Canary:true}
}

func ExampleAsk() {
	engine, stop := startExampleEngine(`"reject"`)
	defer stop()

	in, err := ask.Ask(context.Background(), engine, hitl.CreateRequest{
		Type:        hitl.TypeApproval,
		Question:    "Drop table users_old?",
		Context:     "It has not been written to since March.",
		Options:     hitl.OptionList{{Key: "drop", Label: "Drop it"}, {Key: "keep", Label: "Keep it"}},
		SourceAgent: "db-janitor",
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(in.Status, string(in.Result.Value), "by", in.Result.RespondedBy, "via", in.Result.Channel)
	// Output:
	// alice sees approval: Drop table users_old?
	// answered false by alice via web
}

// An interaction that ends without an answer is an error to test with
// errors.Is: hitl.ErrExpired at the deadline, hitl.ErrCancelled when it was
// withdrawn, and ctx's error when the caller gave up (which withdraws it).
func ExampleAsk_expired() {
	engine, stop := startExampleEngine() // nobody answers
	defer stop()

	_, err := ask.Text(context.Background(), engine, "Anyone?", &ask.Options{Timeout: 50 * time.Millisecond})
	fmt.Println(errors.Is(err, hitl.ErrExpired))
	// Output:
	// true
}
