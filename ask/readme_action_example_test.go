package ask_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
)

// runReviewed is the action example of docs/actions.md, verbatim
// (TestReadmeActionSnippet keeps the two in step).
func runReviewed(ctx context.Context, svc hitl.Service, command string) error {
	d, err := ask.Action(ctx, svc, "Bash", map[string]string{"command": command},
		&ask.ActionOptions{Options: ask.Options{SourceAgent: "build-bot", Timeout: 10 * time.Minute}})
	if err != nil {
		return err // expired, cancelled, or the server could not be reached
	}
	switch d.Kind {
	case hitl.DecisionReject:
		return fmt.Errorf("a person rejected %q: %s", command, d.Message)
	case hitl.DecisionRespond:
		return fmt.Errorf("a person answered instead: %s", d.Message)
	}
	var args struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal(d.Args, &args); err != nil { // approved as is, or edited
		return err
	}
	fmt.Println("running:", args.Command) // exec.CommandContext(ctx, "sh", "-c", args.Command)
	return nil
}

// The action example of docs/actions.md: the person edits the command.
func Example_reviewedCommand() {
	engine, stop := startExampleEngine(`{"decision": "edit", "args": {"command": "make deploy-staging"}}`)
	defer stop()
	if err := runReviewed(context.Background(), engine, "make deploy-prod"); err != nil {
		fmt.Println("error:", err)
	}
	// Output:
	// alice sees action: Run Bash?
	// running: make deploy-staging
}

// TestReadmeActionSnippet checks that the action example of
// docs/actions.md is runReviewed above.
func TestReadmeActionSnippet(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../docs/actions.md")
	if err != nil {
		t.Fatalf("read README: %v", err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- snippet: go-action -->\n```go\n")
	if !ok {
		t.Fatal("docs/actions.md has no go-action snippet")
	}
	snippet, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatal("docs/actions.md's go-action snippet is not closed")
	}
	src, err := os.ReadFile("readme_action_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), snippet+"\n") {
		t.Errorf("docs/actions.md's go-action snippet is not runReviewed; the page has:\n%s", snippet)
	}
}
