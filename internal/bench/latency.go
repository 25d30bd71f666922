package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// Timing bounds of the latency and load phases.
const (
	// lostBound is how long after an answer was accepted (200) its agent's
	// wait may take to return before the wake-up counts as lost.
	lostBound = 5 * time.Second
	// pollTimeout is the long-poll the agents ask for; longer than
	// lostBound, so a lost wake-up shows as a poll that returns pending.
	pollTimeout = 10 * time.Second
	// settle is how long the sequential unblock measurement lets a new
	// long-poll reach the server and register before answering.
	settle = 2 * time.Millisecond
	// arrivalBound is how long a question may take to reach a subscriber
	// before the benchmark gives up on it.
	arrivalBound = 10 * time.Second
)

// unblock measures answer → agent unblocked, one agent at a time: the
// agent creates a question and long-polls it; once the poll has had time to
// register, the person answers; the sample is from sending the answer to
// the agent's poll returning. It returns the distribution and the number of
// lost wake-ups.
func unblock(ctx context.Context, srv *Server, n int, progress func(string, ...any)) (dist, int, error) {
	a := newAPI(srv, 4)
	defer a.close()
	warm := max(n/10, 5)
	samples := make([]time.Duration, 0, n)
	lost := 0
	for i := range warm + n {
		if i > 0 && i%max(n/5, 1) == 0 {
			progress("unblock: %d/%d", i, warm+n)
		}
		d, ok, err := unblockOne(ctx, a, i)
		switch {
		case err != nil:
			return dist{}, lost, fmt.Errorf("unblock: %w", err)
		case !ok:
			lost++
		case i >= warm:
			samples = append(samples, d)
		}
	}
	return summarize(samples), lost, nil
}

// unblockOne takes one sample of unblock: it returns the time from sending
// the answer to the agent's poll returning, and false when the wake-up
// was lost.
func unblockOne(ctx context.Context, a *api, i int) (time.Duration, bool, error) {
	return unblockVia(ctx, a, a, a, i)
}

// unblockVia is unblockOne with the question asked through ask, waited on
// through wait and answered through answer: with replicas, three servers.
func unblockVia(ctx context.Context, ask, wait, answer *api, i int) (time.Duration, bool, error) {
	type polled struct {
		at     time.Time
		status string
		err    error
	}
	id, err := ask.create(ctx, "unblock", i)
	if err != nil {
		return 0, false, err
	}
	done := make(chan polled, 1)
	go func() {
		st, err := wait.wait(ctx, id, pollTimeout)
		done <- polled{time.Now(), st, err}
	}()
	time.Sleep(settle)
	t0 := time.Now()
	if err := answer.respond(ctx, id); err != nil {
		return 0, false, err
	}
	answered := time.Now()
	var p polled
	select {
	case p = <-done:
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
	switch {
	case p.err != nil:
		return 0, false, p.err
	case p.at.Before(t0):
		return 0, false, fmt.Errorf("the wait on %s returned %q before the answer was sent", id, p.status)
	case p.status != "answered" || p.at.Sub(answered) > lostBound:
		return 0, false, nil
	}
	return p.at.Sub(t0), true, nil
}

// subscriber is one WebSocket connection whose hitl:question messages are
// passed on, with their arrival time, to questions.
type subscriber struct {
	ws        *wsConn
	questions chan arrival
	done      chan struct{}
	err       error
}

// arrival is a question seen by a subscriber.
type arrival struct {
	at  time.Time
	msg wsMessage
}

// subscribe connects a subscriber that reads until closed.
func subscribe(ctx context.Context, srv *Server) (*subscriber, error) {
	ws, err := dialWS(ctx, srv, nil)
	if err != nil {
		return nil, err
	}
	s := &subscriber{ws: ws, questions: make(chan arrival, 4096), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer close(s.questions)
		for {
			payload, err := ws.next()
			if err != nil {
				s.err = err
				return
			}
			at := time.Now()
			if !isQuestion(payload) {
				continue
			}
			var m wsMessage
			if err := json.Unmarshal(payload, &m); err != nil {
				s.err = fmt.Errorf("decode stream message: %w", err)
				return
			}
			select {
			case s.questions <- arrival{at, m}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return s, nil
}

// close disconnects and waits for the reader to stop.
func (s *subscriber) close() {
	s.ws.Close()
	for range s.questions {
	}
	<-s.done
}

// notify measures question → person: from sending the create POST to the
// hitl:question arriving on one WebSocket subscriber, one question at a
// time. The questions are cancelled afterwards.
func notify(ctx context.Context, srv *Server, n int, progress func(string, ...any)) (dist, error) {
	a := newAPI(srv, 16)
	defer a.close()
	sub, err := subscribe(ctx, srv)
	if err != nil {
		return dist{}, fmt.Errorf("notify: %w", err)
	}
	defer sub.close()
	var ids []string
	defer func() { cancelAll(context.WithoutCancel(ctx), a, ids) }()
	warm := max(n/10, 5)
	samples := make([]time.Duration, 0, n)
	for i := range warm + n {
		if i > 0 && i%max(n/5, 1) == 0 {
			progress("notify: %d/%d", i, warm+n)
		}
		t0 := time.Now()
		id, err := a.create(ctx, "notify", i)
		if err != nil {
			return dist{}, fmt.Errorf("notify: %w", err)
		}
		ids = append(ids, id)
		timeout := time.After(arrivalBound)
	wait:
		for {
			select {
			case q, ok := <-sub.questions:
				if !ok {
					return dist{}, fmt.Errorf("notify: websocket closed: %v", sub.err)
				}
				if q.msg.InteractionID == id {
					if i >= warm {
						samples = append(samples, q.at.Sub(t0))
					}
					break wait
				}
			case <-timeout:
				return dist{}, fmt.Errorf("notify: question %s did not arrive within %s", id, arrivalBound)
			case <-ctx.Done():
				return dist{}, ctx.Err()
			}
		}
	}
	return summarize(samples), nil
}

// cancelAll cancels ids with a few workers, ignoring those already
// terminal, so the benchmark leaves nothing pending behind.
func cancelAll(ctx context.Context, a *api, ids []string) {
	// A minute, or 5 ms per question: a minute left a third of 100,000
	// pending on a PostgreSQL on loopback.
	ctx, cancel := context.WithTimeout(ctx, max(time.Minute, time.Duration(len(ids))*5*time.Millisecond))
	defer cancel()
	work := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for id := range work {
				_ = a.cancel(ctx, id) // a terminal one is a 409 or 410: fine
			}
		})
	}
	for _, id := range ids {
		select {
		case work <- id:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
}
