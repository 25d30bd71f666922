package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// personCommand is the command of the calls that go to a person: no rule
// decides it.
const personCommand = "git log -1"

// personHook samples one dialect's calls that no rule decides: from
// starting the hook to its question on the person's WebSocket, and from
// the person's approval to the hook exiting with an allow.
func personHook(ctx context.Context, cfg HooksConfig, srv *Server, a *api, dialect string, env []string, res *HooksResult) error {
	sub, err := subscribe(ctx, srv)
	if err != nil {
		return fmt.Errorf("%s to a person: %w", dialect, err)
	}
	defer sub.close()
	var notified, unblocked []time.Duration
	for range cfg.PersonSamples {
		n, u, err := personHookOnce(ctx, cfg.Exe, dialect, env, hookInput(dialect, nextCall(), personCommand), sub, a)
		if err != nil {
			return fmt.Errorf("%s to a person: %w", dialect, err)
		}
		notified, unblocked = append(notified, n), append(unblocked, u)
	}
	fig := res.Hooks[dialect]
	n, u := ms(summarize(notified).P50), ms(summarize(unblocked).P50)
	fig.PersonNotifyP50, fig.PersonUnblockP50 = &n, &u
	res.Hooks[dialect] = fig
	return nil
}

// personHookOnce runs the hook once, answers its question on arrival, and
// returns question → person and answer → hook exit.
func personHookOnce(ctx context.Context, exe, dialect string, env []string, input []byte, sub *subscriber, a *api) (time.Duration, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "hook", dialect)
	cmd.Env, cmd.Stdin = env, bytes.NewReader(input)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var id string
	var arrived time.Time
	for id == "" {
		select {
		case q, ok := <-sub.questions:
			if !ok {
				return 0, 0, fmt.Errorf("websocket closed: %v", sub.err)
			}
			if q.msg.SourceAgent == dialect || dialect == "copilot-cli" && q.msg.SourceAgent == "copilot" {
				id, arrived = q.msg.InteractionID, q.at
			}
		case err := <-exited:
			return 0, 0, fmt.Errorf("the hook exited before its question arrived: %v: %s %s", err, out.Bytes(), errOut.Bytes())
		case <-ctx.Done():
			return 0, 0, errors.New("the question did not arrive within a minute")
		}
	}
	// Let the hook's wait reach the server, as unblock does.
	time.Sleep(settle)
	t1 := time.Now()
	if err := a.do(ctx, "POST", "/api/v1/interactions/"+id+"/respond", []byte(`{"value":{"decision":"approve"}}`), nil); err != nil {
		return 0, 0, err
	}
	if err := <-exited; err != nil {
		return 0, 0, fmt.Errorf("the hook: %v: %s", err, errOut.Bytes())
	}
	done := time.Since(t1)
	if err := expectAllow(dialect, out.Bytes()); err != nil {
		return 0, 0, err
	}
	return arrived.Sub(t0), done, nil
}
