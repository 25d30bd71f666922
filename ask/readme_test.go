package ask_test

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeGoSnippet checks that the README's Go example is the deploy
// function that Example_remoteServer runs, so the README shows code that
// compiles and works.
func TestReadmeGoSnippet(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatalf("read README: %v", err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- snippet: go -->\n```go\n")
	if !ok {
		t.Fatal("README has no Go snippet")
	}
	snippet, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatal("README's Go snippet is not closed")
	}
	src, err := os.ReadFile("readme_example_test.go")
	if err != nil {
		t.Fatalf("read example: %v", err)
	}
	if !strings.Contains(string(src), snippet+"\n") {
		t.Errorf("README's Go snippet is not the deploy function in readme_example_test.go; README has:\n%s", snippet)
	}
}
