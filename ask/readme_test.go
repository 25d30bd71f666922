package ask_test

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeGoSnippet checks that the Go example of docs/clients.md is the
// deploy function that Example_remoteServer runs, so the page shows code
// that compiles and works.
func TestReadmeGoSnippet(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../docs/clients.md")
	if err != nil {
		t.Fatalf("read docs/clients.md: %v", err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- snippet: go -->\n```go\n")
	if !ok {
		t.Fatal("docs/clients.md has no Go snippet")
	}
	snippet, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatal("docs/clients.md's Go snippet is not closed")
	}
	src, err := os.ReadFile("readme_example_test.go")
	if err != nil {
		t.Fatalf("read example: %v", err)
	}
	if !strings.Contains(string(src), snippet+"\n") {
		t.Errorf("docs/clients.md's Go snippet is not the deploy function in readme_example_test.go; the page has:\n%s", snippet)
	}
}
