package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/sqlite"
)

// A server over an engine: an agent asks over HTTP, a person answers over
// HTTP, and the interaction holds the typed answer.
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
	if err := b.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	// Serve srv.Handler() on srv.Listener(l) in production, so long-polls
	// wait without a goroutine each.
	srv := server.New(b, &server.Options{Version: "example"})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	post := func(path, body string) *hitl.Interaction {
		resp, err := http.Post(hs.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		var in hitl.Interaction
		if err := json.NewDecoder(resp.Body).Decode(&in); err != nil {
			log.Fatal(err)
		}
		if in.Result == nil {
			fmt.Println(resp.StatusCode, in.Type, in.Status)
		} else {
			fmt.Println(resp.StatusCode, in.Type, in.Status, string(in.Result.Value))
		}
		return &in
	}
	in := post("/api/v1/interactions", `{"interaction_type": "approval", "question": "Deploy build 1432?", "timeout": 600}`)
	post("/api/v1/interactions/"+in.ID+"/respond", `{"value": "yes"}`)
	// Output:
	// 201 approval pending
	// 200 approval answered true
}
