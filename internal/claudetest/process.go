package claudetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Process is a CLI run that has started.
type Process struct {
	t       testing.TB
	cmd     *exec.Cmd
	cancel  context.CancelFunc
	stdin   io.WriteCloser // with Options.Stream
	stdout  *lineWriter
	stderr  bytes.Buffer
	done    chan struct{} // closed when the CLI has exited; err is set
	err     error
	ctx     context.Context
	timeout time.Duration

	waitOnce sync.Once
	run      *Output
}

func newProcess(t testing.TB, ctx context.Context, cmd *exec.Cmd, cancel context.CancelFunc, run *Output) *Process {
	p := &Process{t: t, cmd: cmd, cancel: cancel, run: run, done: make(chan struct{}), ctx: ctx,
		stdout: &lineWriter{ready: make(chan struct{}, 1)}}
	cmd.Stdout, cmd.Stderr = p.stdout, &p.stderr
	return p
}

// Send writes v as one JSON line to the CLI's standard input (Options.Stream).
func (p *Process) Send(v any) {
	p.t.Helper()
	if p.stdin == nil {
		p.t.Fatal("claudetest: Send needs Options.Stream")
	}
	b, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		p.t.Fatalf("write to claude: %v", err)
	}
}

// CloseStdin closes the CLI's standard input, which ends a stream-json
// session once the CLI has finished its turn.
func (p *Process) CloseStdin() {
	if p.stdin != nil {
		p.stdin.Close()
	}
}

// Next returns the next line of the CLI's output. It fails the test if the
// CLI exits first or within a generous bound.
func (p *Process) Next() json.RawMessage {
	p.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		if line, ok := p.stdout.pop(); ok {
			return line
		}
		select {
		case <-p.stdout.ready:
		case <-p.done:
			if line, ok := p.stdout.pop(); ok {
				return line
			}
			p.t.Fatalf("claude exited before the next line of output (stderr: %s)", p.stderr.Bytes())
		case <-timeout:
			p.t.Fatal("timed out waiting for a line of claude's output")
		}
	}
}

// NextOfType returns the next line of output whose "type" is one of types,
// skipping others.
func (p *Process) NextOfType(types ...string) json.RawMessage {
	p.t.Helper()
	for {
		line := p.Next()
		var head struct {
			Type string `json:"type"`
		}
		json.Unmarshal(line, &head)
		for _, typ := range types {
			if head.Type == typ {
				return line
			}
		}
	}
}

// Wait closes standard input, waits for the CLI to exit and returns what
// it left. Safe to call more than once.
func (p *Process) Wait() *Output {
	p.t.Helper()
	p.waitOnce.Do(func() {
		p.CloseStdin()
		<-p.done
		if errors.Is(p.ctx.Err(), context.DeadlineExceeded) {
			p.t.Errorf("claude ran longer than %v and was killed", p.timeout)
		}
		p.cancel()
		var exit *exec.ExitError
		if p.err != nil && !errors.As(p.err, &exit) {
			p.t.Errorf("run claude: %v", p.err)
		}
		r := p.run
		r.Stdout, r.Stderr = p.stdout.bytes(), p.stderr.Bytes()
		r.ExitCode = p.cmd.ProcessState.ExitCode()
		if len(r.Stderr) > 0 {
			p.t.Logf("claude stderr:\n%s", r.Stderr)
		}
		r.Result = lastResult(r.Lines())
	})
	return p.run
}

// Lines splits r's stdout into its lines (one JSON value each).
func (r *Output) Lines() []json.RawMessage {
	var lines []json.RawMessage
	for _, l := range bytes.Split(r.Stdout, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			lines = append(lines, json.RawMessage(l))
		}
	}
	return lines
}

// lastResult returns the last of lines that is a result object.
func lastResult(lines []json.RawMessage) *Result {
	for i := len(lines) - 1; i >= 0; i-- {
		var res Result
		if json.Unmarshal(lines[i], &res) == nil && res.Type == "result" {
			return &res
		}
	}
	return nil
}

// lineWriter keeps everything written to it and queues its complete lines.
type lineWriter struct {
	mu      sync.Mutex
	all     bytes.Buffer
	partial []byte
	queue   []json.RawMessage
	ready   chan struct{} // signalled when a line is queued
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(b)
	w.partial = append(w.partial, b...)
	queued := false
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		if line := bytes.TrimSpace(w.partial[:i]); len(line) > 0 {
			w.queue = append(w.queue, append(json.RawMessage(nil), line...))
			queued = true
		}
		w.partial = w.partial[i+1:]
	}
	if queued {
		select {
		case w.ready <- struct{}{}:
		default:
		}
	}
	return len(b), nil
}

func (w *lineWriter) pop() (json.RawMessage, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue) == 0 {
		return nil, false
	}
	line := w.queue[0]
	w.queue = w.queue[1:]
	return line, true
}

func (w *lineWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.all.Bytes()...)
}
