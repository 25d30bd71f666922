package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/postgres/pgtest"
)

// replica is one hitl server of several sharing a PostgreSQL schema.
type replica struct {
	*testServer
	// App is the application_name of its connections; its event listener
	// connects as App + " listener".
	App string
}

// newReplicas starts n servers over one new schema, stopped when the test
// ends. Each has its own store, broker and HTTP server, as separate hitl
// serve processes would.
func newReplicas(t *testing.T, n int) []*replica {
	t.Helper()
	db := hitltest.PostgresDB(t)
	rs := make([]*replica, n)
	for i := range rs {
		app := fmt.Sprintf("hitl %s %c", db.Schema, 'a'+i)
		rs[i] = &replica{testServer: newTestServerWith(t, &hitltest.Options{DB: db, App: app}), App: app}
	}
	return rs
}

// stream is a WebSocket client of one replica, past its replay.
type stream struct {
	c *websocket.Conn
}

// openStream connects to r's /ws and reads its replay up to the pending
// interaction marker, the newest: from then on the client is live.
func openStream(t *testing.T, r *replica, marker string) *stream {
	t.Helper()
	c := dialWS(t, r.testServer, nil)
	for {
		if m := readWS(t, c); m["type"] == "hitl:question" && m["interaction_id"] == marker {
			return &stream{c: c}
		}
	}
}

// expect reads the next message and checks its type and interaction.
func (s *stream) expect(t *testing.T, typ, id string) map[string]any {
	t.Helper()
	return readWSType(t, s.c, typ, id)
}

// ask creates a free-text question on r and returns its ID.
func (r *replica) ask(t *testing.T, req map[string]any) string {
	t.Helper()
	if req == nil {
		req = map[string]any{"question": "Proceed?", "timeout": 600}
	}
	return r.create(t, req).ID
}

// TestReplicasWakeAndStream: an agent waiting on A is woken by an answer
// that reached B, and B's WebSocket clients see A's questions.
func TestReplicasWakeAndStream(t *testing.T) {
	turns.Parallel(t)
	rs := newReplicas(t, 2)
	a, b := rs[0], rs[1]
	ws := openStream(t, b, b.ask(t, nil))

	id := a.ask(t, map[string]any{"interaction_type": "approval", "question": "Deploy to production?", "timeout": 600})
	got := ws.expect(t, "hitl:question", id)
	if got["question"] != "Deploy to production?" {
		t.Errorf("question on B: got %v, want the one asked on A", got["question"])
	}

	done := make(chan hitl.Interaction, 1)
	go func() {
		var in hitl.Interaction
		a.mustDo(t, "GET", "/api/v1/interactions/"+id+"/wait?timeout=30", nil, http.StatusOK, &in)
		done <- in
	}()
	hitltest.Await(t, "the long-poll to wait on A", a.Broker.WaitStarted(id))
	b.mustDo(t, "POST", "/api/v1/interactions/"+id+"/respond", map[string]any{"value": "approve"}, http.StatusOK, nil)
	select {
	case in := <-done:
		if in.Status != hitl.StatusAnswered || string(in.Result.Value) != "true" {
			t.Errorf("waiter on A: got %s %s, want answered true", in.Status, in.Result.Value)
		}
	case <-time.After(streamTimeout):
		t.Fatal("the waiter on A was not woken by the answer on B")
	}
	ws.expect(t, "hitl:resolved", id)
}

// TestReplicasDeadlineFiresOnce: both replicas arm their timers for the
// same deadlines; each interaction expires once, with one event, and each
// replica's clients get one hitl:cancel for it.
func TestReplicasDeadlineFiresOnce(t *testing.T) {
	turns.Parallel(t)
	rs := newReplicas(t, 2)
	a, b := rs[0], rs[1]
	marker := a.ask(t, nil)
	streams := []*stream{openStream(t, a, marker), openStream(t, b, marker)}

	const n = 5
	// Far enough ahead for the five questions to be asked before it on a
	// loaded machine (all must be, or the order below does not hold).
	deadline := time.Now().Add(5 * time.Second).UTC().Format(time.RFC3339Nano)
	ids := map[string]bool{}
	for i := range n {
		r := rs[i%2]
		ids[r.ask(t, map[string]any{"question": fmt.Sprint("Question ", i), "deadline": deadline})] = true
	}
	for _, s := range streams {
		for range n {
			if m := readWS(t, s.c); m["type"] != "hitl:question" || !ids[m["interaction_id"].(string)] {
				t.Fatalf("got %v, want one of the questions", m)
			}
		}
	}
	for i, s := range streams {
		cancelled := map[string]int{}
		for range n {
			m := readWS(t, s.c)
			if m["type"] != "hitl:cancel" || m["reason"] != "timeout" {
				t.Fatalf("replica %d: got %v, want hitl:cancel for timeout", i, m)
			}
			cancelled[m["interaction_id"].(string)]++
		}
		for id := range ids {
			if got := cancelled[id]; got != 1 {
				t.Errorf("replica %d: got %d hitl:cancel for %s, want 1", i, got, id)
			}
		}
	}
	// Had either replica expired one again, its event would come before
	// this marker's.
	marker = b.ask(t, nil)
	for _, s := range streams {
		s.expect(t, "hitl:question", marker)
	}
	evs, err := a.Store.Events(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	expired := map[string]int{}
	for _, ev := range evs {
		if ev.Type == hitl.EventExpired {
			expired[ev.InteractionID]++
		}
	}
	for id := range ids {
		if got := expired[id]; got != 1 {
			t.Errorf("expired events for %s: got %d, want 1", id, got)
		}
	}
}

// TestReplicasFiftyConcurrentAnswers splits 50 answers across two
// replicas: exactly one wins.
func TestReplicasFiftyConcurrentAnswers(t *testing.T) {
	turns.Parallel(t)
	rs := newReplicas(t, 2)
	id := rs[0].ask(t, map[string]any{"interaction_type": "approval", "question": "Merge?"})
	const n = 50
	statuses := make(chan int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			status, _ := rs[i%2].do(t, "POST", "/api/v1/interactions/"+id+"/respond", map[string]any{"value": i%3 == 0})
			statuses <- status
		})
	}
	close(start)
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[http.StatusOK] != 1 || count[http.StatusConflict] != n-1 {
		t.Errorf("statuses: got %v, want one 200 and %d 409", count, n-1)
	}
}

// TestReplicasListenerKilled terminates A's listening connection: A
// reconnects, catches up from the log, and neither its waiter nor its
// WebSocket clients miss anything that happened on B meanwhile.
func TestReplicasListenerKilled(t *testing.T) {
	turns.Parallel(t)
	rs := newReplicas(t, 2)
	a, b := rs[0], rs[1]
	ws := openStream(t, a, a.ask(t, nil))
	first := b.ask(t, nil)
	ws.expect(t, "hitl:question", first) // A's listener is up

	done := make(chan hitl.Interaction, 1)
	go func() {
		var in hitl.Interaction
		a.mustDo(t, "GET", "/api/v1/interactions/"+first+"/wait?timeout=30", nil, http.StatusOK, &in)
		done <- in
	}()
	hitltest.Await(t, "the long-poll to wait on A", a.Broker.WaitStarted(first))

	c := pgtest.Connect(t)
	var killed int
	err := c.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1`, a.App+" listener").Scan(&killed)
	if err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d listener connections, want 1", killed)
	}
	b.mustDo(t, "POST", "/api/v1/interactions/"+first+"/respond", map[string]any{"value": "done"}, http.StatusOK, nil)
	second := b.ask(t, nil)
	b.mustDo(t, "POST", "/api/v1/interactions/"+second+"/cancel", map[string]any{"reason": "changed my mind"}, http.StatusOK, nil)

	select {
	case in := <-done:
		if in.Status != hitl.StatusAnswered {
			t.Errorf("waiter on A: got %s, want answered", in.Status)
		}
	case <-time.After(streamTimeout):
		t.Fatal("the waiter on A was not woken after its listener was killed")
	}
	ws.expect(t, "hitl:resolved", first)
	ws.expect(t, "hitl:question", second)
	ws.expect(t, "hitl:cancel", second)
}

// TestReplicaReadyz: /readyz follows the database connection.
func TestReplicaReadyz(t *testing.T) {
	turns.Parallel(t)
	r := newReplicas(t, 1)[0]
	r.mustDo(t, "GET", "/readyz", nil, http.StatusOK, nil)
	r.Store.Close()
	r.mustDo(t, "GET", "/readyz", nil, http.StatusServiceUnavailable, nil)
}

// TestReplicasResume: a client resumes on another replica from the seq it
// got on the first, and is sent what it missed, whichever replica did it:
// the seqs are the shared event log's.
func TestReplicasResume(t *testing.T) {
	turns.Parallel(t)
	rs := newReplicas(t, 2)
	a, b := rs[0], rs[1]
	c := dialWS(t, a.testServer, nil)
	readReplay(t, c)
	asked := a.ask(t, nil)
	seq := int64(readWSType(t, c, "hitl:question", asked)["seq"].(float64))
	c.CloseNow()

	b.mustDo(t, "POST", "/api/v1/interactions/"+asked+"/respond", map[string]any{"value": "go"}, http.StatusOK, nil)
	later := b.ask(t, nil)
	resumed := dialWSAt(t, b.testServer, fmt.Sprintf("/ws?after=%d", seq))
	var got []string
	var done map[string]any
	for len(got) < 3 || done == nil {
		m := readWSRaw(t, resumed)
		if m["type"] == "hitl:replay_done" {
			done = m
			continue
		}
		got = append(got, fmt.Sprint(m["type"], " ", m["interaction_id"]))
	}
	want := []string{"hitl:resolved " + asked, "hitl:cancel " + asked, "hitl:question " + later}
	if fmt.Sprint(got) != fmt.Sprint(want) || done["resumed"] != true {
		t.Errorf("resumed on B: %q and %v, want %q and a resumed hitl:replay_done", got, done, want)
	}
}
