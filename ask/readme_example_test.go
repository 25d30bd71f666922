package ask_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/server"
)

// deploy is the README's Go example, verbatim (TestReadmeGoSnippet keeps
// the two in step).
func deploy(ctx context.Context, hitlURL string) error {
	svc := client.New(hitlURL, nil) // or in process: broker.New(store, nil)

	ok, err := ask.YesNo(ctx, svc, "Deploy build 1432 to production?", "Deploy", "Hold",
		&ask.Options{Context: "All 312 checks passed.", Timeout: 10 * time.Minute})
	switch {
	case errors.Is(err, hitl.ErrExpired):
		return errors.New("nobody answered in time; not deploying")
	case err != nil:
		return err
	case !ok:
		return errors.New("a person held the deploy")
	}

	region, _, err := ask.Choice(ctx, svc, "Which region first?", []string{"EU West", "US East"}, nil)
	if err != nil {
		return err
	}
	fmt.Println("deploying to", region)
	return nil
}

// The README's example: an agent asks through a remote hitl server.
func Example_remoteServer() {
	engine, stop := startExampleEngine(`"Deploy"`, `"EU West"`)
	defer stop()
	ts := httptest.NewServer(server.New(engine, nil).Handler()) // hitl serve
	defer ts.Close()

	if err := deploy(context.Background(), ts.URL); err != nil {
		fmt.Println("error:", err)
	}
	// Output:
	// alice sees approval: Deploy build 1432 to production?
	// alice sees single_choice: Which region first?
	// deploying to eu_west
}
