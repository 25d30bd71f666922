package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
)

// hitlBin is the hitl binary built once for the end-to-end tests.
var hitlBin string

func TestMain(m *testing.M) {
	turns.Use(1)
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "hitl-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "make temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	hitlBin = filepath.Join(dir, "hitl")
	build := exec.Command("go", "build", "-o", hitlBin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// syncBuffer is a bytes.Buffer safe to read while a process writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proc is a running hitl subprocess.
type proc struct {
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{}
	code   int
}

// cleanEnv is the environment without HITL_* variables, so the tests do
// not depend on the caller's.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HITL_") {
			env = append(env, kv)
		}
	}
	return env
}

// start runs hitl with args in the background; it is killed if still
// running when the test ends.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	return startWith(t, nil, args...)
}

// startWith is start with the variables env added to the environment.
func startWith(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{
		cmd:    exec.Command(hitlBin, args...),
		stdout: &syncBuffer{},
		stderr: &syncBuffer{},
		done:   make(chan struct{}),
	}
	p.cmd.Env = append(cleanEnv(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start hitl %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		err := p.cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			p.code = ee.ExitCode()
		default:
			p.code = -1
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(60 * time.Second):
		t.Fatalf("hitl %s still running after 60s; stderr:\n%s", strings.Join(p.cmd.Args[1:], " "), p.stderr)
		return 0
	}
}

// hitlRun runs hitl with args to completion.
func hitlRun(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	p := start(t, args...)
	code = p.wait(t)
	return p.stdout.String(), p.stderr.String(), code
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string { return hitltest.FreeAddr(t) }

// hitlServer is a "hitl serve" subprocess.
type hitlServer struct {
	*proc
	URL string
	DB  string
}

// startServer runs "hitl serve" on a free port over a new database.
func startServer(t *testing.T) *hitlServer {
	t.Helper()
	return startServerAt(t, freeAddr(t), filepath.Join(t.TempDir(), "hitl.db"))
}

// startServerAt runs "hitl serve" on addr over the database db, with
// extra args, and waits until /healthz answers.
func startServerAt(t *testing.T, addr, db string, args ...string) *hitlServer {
	t.Helper()
	s := &hitlServer{proc: start(t, append([]string{"serve", "--addr", addr, "--db", db, "--log-level", "debug"}, args...)...), URL: "http://" + addr, DB: db}
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(15 * time.Second): // then killed by start's cleanup
		}
	})
	hc := &http.Client{Timeout: time.Second}
	waitFor(t, "hitl serve to answer /healthz", func() bool {
		select {
		case <-s.done:
			t.Fatalf("hitl serve exited with %d:\n%s", s.code, s.stderr)
		default:
		}
		resp, err := hc.Get(s.URL + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return s
}

// client returns a Go client for the server, whose responses are checked
// against the OpenAPI document.
func (s *hitlServer) client(t *testing.T) *client.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return client.New(s.URL, &client.Options{HTTPClient: &http.Client{Transport: hitltest.ValidatingTransport(t, tr)}})
}

// waitFor polls cond every 10 ms until it holds, failing the test after a
// generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// pendingByKey waits for the pending interaction with the given
// idempotency key to appear and returns it.
func pendingByKey(t *testing.T, c *client.Client, key string) *hitl.Interaction {
	t.Helper()
	var found *hitl.Interaction
	waitFor(t, "interaction "+key+" to be pending", func() bool {
		list, _, err := c.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending, IdempotencyKey: key})
		if err != nil {
			t.Fatalf("list pending: %v", err)
		}
		if len(list) > 0 {
			found = list[0]
		}
		return found != nil
	})
	return found
}
