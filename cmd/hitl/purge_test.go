package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/turns"
)

func TestParseAge(t *testing.T) {
	good := map[string]time.Duration{
		"0":     0,
		"90d":   90 * 24 * time.Hour,
		"1.5d":  36 * time.Hour,
		"36h":   36 * time.Hour,
		"1d12h": 36 * time.Hour,
		"90m":   90 * time.Minute,
		" 7d ":  7 * 24 * time.Hour,
	}
	for in, want := range good {
		if got, err := parseAge("--retention", in); err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "-1d", "-3h", "90", "ninety days", "1dd", "1d-1h", "NaNd", "Infd", "100000d", "1e9h"} {
		if got, err := parseAge("--retention", in); err == nil {
			t.Errorf("parseAge(%q) = %v, want an error", in, got)
		} else if !strings.Contains(err.Error(), "--retention") {
			t.Errorf("parseAge(%q): %v, want the flag named", in, err)
		}
	}
}

// endedAndPending asks three questions on c: it answers the first,
// cancels the second and leaves the third pending (the newest event is
// the third's, so the first two may be purged).
func endedAndPending(t *testing.T, c *client.Client) (answered, cancelled, pending *hitl.Interaction) {
	t.Helper()
	ctx := context.Background()
	ask := func(q string) *hitl.Interaction {
		in, _, err := c.Create(ctx, hitl.CreateRequest{Question: q})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	answered, cancelled = ask("Answered?"), ask("Cancelled?")
	if _, err := c.Respond(ctx, answered.ID, json.RawMessage(`"yes"`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Cancel(ctx, cancelled.ID, ""); err != nil {
		t.Fatal(err)
	}
	return answered, cancelled, ask("Pending?")
}

// gone checks that the interactions are not found, and that keep are.
func gone(t *testing.T, c *client.Client, purged []*hitl.Interaction, keep ...*hitl.Interaction) {
	t.Helper()
	for _, in := range purged {
		if _, err := c.Get(context.Background(), in.ID); hitl.ErrorCode(err) != hitl.ENOTFOUND {
			t.Errorf("get %s after purge: %v, want not found", in.Question, err)
		}
	}
	for _, in := range keep {
		if _, err := c.Get(context.Background(), in.ID); err != nil {
			t.Errorf("get %s after purge: %v", in.Question, err)
		}
	}
}

// startOnAnyPort runs hitl serve on a loopback port of its choosing over
// the database db, with more flags in args, and returns it once it logs
// its URL (a port chosen beforehand may be taken by a parallel test in
// between).
func startOnAnyPort(t *testing.T, db string, args ...string) *hitlServer {
	t.Helper()
	p := start(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-level", "debug"}, args...)...)
	s := &hitlServer{proc: p, DB: db}
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
	})
	waitFor(t, "hitl serve to listen", func() bool {
		select {
		case <-p.done:
			t.Fatalf("hitl serve exited with %d:\n%s", p.code, p.stderr)
		default:
		}
		if m := listening.FindStringSubmatch(p.stderr.String()); m != nil {
			s.URL = strings.Replace(m[1], "localhost", "127.0.0.1", 1)
			return true
		}
		return false
	})
	return s
}

func TestPurgeCommand(t *testing.T) {
	turns.Parallel(t)
	s := startOnAnyPort(t, filepath.Join(t.TempDir(), "hitl.db"))
	c := s.client(t)
	answered, cancelled, pending := endedAndPending(t, c)

	summary := regexp.MustCompile(`^(would remove|removed) 2 interactions that ended before \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, with 4 events, 0 notifications, 0 slack_actions, 0 slack_messages, 0 webhook_attempts, 0 webhook_deliveries\n$`)
	out := mustRun(t, 0, "", "purge", "--older-than", "1ms", "--dry-run", "--db", s.DB)
	if !summary.MatchString(out) || !strings.HasPrefix(out, "would remove") {
		t.Errorf("dry run printed %q, want %s", out, summary)
	}
	gone(t, c, nil, answered, cancelled, pending)

	out = mustRun(t, 0, "", "purge", "--older-than", "1ms", "--db", s.DB)
	if !summary.MatchString(out) || !strings.HasPrefix(out, "removed") {
		t.Errorf("purge printed %q, want %s", out, summary)
	}
	gone(t, c, []*hitl.Interaction{answered, cancelled}, pending)
	if out := mustRun(t, 0, "", "purge", "--older-than", "1ms", "--db", s.DB); !strings.HasPrefix(out, "removed 0 interactions") {
		t.Errorf("second purge printed %q, want nothing removed", out)
	}

	db := filepath.Join(t.TempDir(), "hitl.db")
	for _, args := range [][]string{
		{},
		{"--older-than", "0"},
		{"--older-than", "-3d"},
		{"--older-than", "a while"},
		{"--older-than", "30d", "--batch", "-1"},
		{"--older-than", "30d", "extra"},
	} {
		_, stderr, code := hitlRunWith(t, "", nil, append([]string{"purge", "--db", db}, args...)...)
		if code != 2 || !strings.HasPrefix(stderr, "hitl purge: ") {
			t.Errorf("purge %q: exit %d, %q; want 2 and a message", args, code, stderr)
		}
	}
}

// TestServeRetention restarts a server with --retention 1ms: it purges
// what ended before, at once, and logs how many went.
func TestServeRetention(t *testing.T) {
	turns.Parallel(t)
	s := startOnAnyPort(t, filepath.Join(t.TempDir(), "hitl.db"))
	answered, cancelled, pending := endedAndPending(t, s.client(t))
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(t); code != 0 {
		t.Fatalf("hitl serve exited with %d:\n%s", code, s.stderr)
	}

	s2 := startOnAnyPort(t, s.DB, "--retention", "1ms")
	waitFor(t, "the purge to be logged", func() bool {
		return strings.Contains(s2.stderr.String(), `msg="purged ended interactions"`)
	})
	if log := s2.stderr.String(); !strings.Contains(log, "interactions=2 events=4") || !strings.Contains(log, "retention=1ms") {
		t.Errorf("log does not say 2 interactions and 4 events went with retention 1ms:\n%s", log)
	}
	gone(t, s2.client(t), []*hitl.Interaction{answered, cancelled}, pending)

	for _, env := range [][]string{{"HITL_RETENTION=forever"}, {"HITL_RETENTION=-1d"}} {
		_, stderr, code := hitlRunWith(t, "", env, "serve", "--db", filepath.Join(t.TempDir(), "hitl.db"))
		if code != 2 || !strings.Contains(stderr, "--retention") {
			t.Errorf("%s: exit %d, %q; want 2 and a message about --retention", env, code, stderr)
		}
	}
}

// TestServeClaimTTL starts a server with --claim-ttl 2m: a claim that
// names no time holds two minutes. A bad value is refused at start.
func TestServeClaimTTL(t *testing.T) {
	turns.Parallel(t)
	s := startOnAnyPort(t, filepath.Join(t.TempDir(), "hitl.db"), "--claim-ttl", "2m")
	in, _, err := s.client(t).Create(context.Background(), hitl.CreateRequest{Question: "Who takes this?", ClaimMode: hitl.ClaimShared})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(s.URL+"/api/v1/interactions/"+in.ID+"/claim", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var claimed hitl.Interaction
	if err := json.NewDecoder(resp.Body).Decode(&claimed); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("claim: %d, %v", resp.StatusCode, err)
	}
	if claimed.Claim == nil {
		t.Fatal("the claim is not shown on the interaction")
	}
	if held := claimed.Claim.ExpiresAt.Sub(claimed.Claim.At); held != 2*time.Minute {
		t.Errorf("the claim holds %s; want 2m", held)
	}

	for _, v := range []string{"forever", "0", "-1m", "25h"} {
		_, stderr, code := hitlRunWith(t, "", []string{"HITL_CLAIM_TTL=" + v}, "serve", "--db", filepath.Join(t.TempDir(), "hitl.db"))
		if code != 2 || !strings.Contains(stderr, "--claim-ttl") {
			t.Errorf("HITL_CLAIM_TTL=%s: exit %d, %q; want 2 and a message about --claim-ttl", v, code, stderr)
		}
	}
}
