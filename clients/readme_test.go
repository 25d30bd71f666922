package clients_test

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
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// deployFiveLines holds the Go example of docs/clients.md, verbatim between the markers (TestReadmeClientsGo keeps the two
// in step). The Python and TypeScript examples beside it are run by their
// suites' README tests.
func deployFiveLines(ctx context.Context) {
	// README begin
	svc := client.New(os.Getenv("HITL_URL"), &client.Options{Token: os.Getenv("HITL_TOKEN")})
	ok, err := ask.YesNo(ctx, svc, "Deploy build 1432 to production?", "", "", &ask.Options{Timeout: 10 * time.Minute})
	if err == nil && ok {
		fmt.Println("deploying")
	}
	// README end
}

// readmeSnippet returns the fenced block after "<!-- snippet: name -->" in
// docs/clients.md.
func readmeSnippet(t *testing.T, name, lang string) string {
	t.Helper()
	readme, err := os.ReadFile("../docs/clients.md")
	if err != nil {
		t.Fatalf("read docs/clients.md: %v", err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- snippet: "+name+" -->\n\n```"+lang+"\n")
	if !ok {
		t.Fatalf("docs/clients.md has no %s snippet", name)
	}
	snippet, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatalf("docs/clients.md's %s snippet is not closed", name)
	}
	return snippet
}

func TestReadmeClientsGo(t *testing.T) {
	snippet := readmeSnippet(t, "clients-go", "go")
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(src), "\t// README begin\n")
	body, _, _ = strings.Cut(body, "\t// README end\n")
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	if got := strings.Join(lines, "\n"); got != snippet {
		t.Errorf("docs/clients.md's clients-go snippet is not deployFiveLines' body; the page has:\n%s\nthe test has:\n%s", snippet, got)
	}

	// And it works: a person approves.
	ts := hitltest.Start(t, nil)
	person := hitl.WithCaller(context.Background(), hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb})
	answered := make(chan error, 1)
	ts.Broker.Observe(func(ev *hitl.Event) {
		if ev.Type == hitl.EventCreated {
			go func() {
				_, err := ts.Broker.Respond(person, ev.Interaction.ID, json.RawMessage(`true`))
				answered <- err
			}()
		}
	})
	t.Setenv("HITL_URL", ts.URL)
	t.Setenv("HITL_TOKEN", "")
	out := captureStdout(t, func() { deployFiveLines(t.Context()) })
	if err := <-answered; err != nil {
		t.Fatalf("respond: %v", err)
	}
	if out != "deploying\n" {
		t.Errorf("printed %q, want %q", out, "deploying\n")
	}
}

// captureStdout returns what fn prints.
func captureStdout(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = saved }()
	fn()
	w.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	r.Close()
	return b.String()
}
