package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestStreamsOutliveARequestReadDeadline: a read deadline set on the
// request's connection (by middleware bounding how long a body may take)
// ends neither stream when it passes: left on an SSE request, it would end
// the request's context, and the stream with it; a WebSocket's connection
// is taken over with its deadlines cleared.
func TestStreamsOutliveARequestReadDeadline(t *testing.T) {
	turns.Parallel(t)
	const readDeadline = 300 * time.Millisecond
	bounded := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(readDeadline))
			h.ServeHTTP(w, r)
		})
	}
	ts := newTestServerWith(t, &hitltest.Options{Wrap: bounded})
	b := ts.Broker

	s := openSSE(t, ts, "", "")
	s.replay(t)
	c := dialWS(t, ts, nil)
	readReplay(t, c)
	// Past the deadline (this wait is the test: no event marks it).
	select {
	case <-time.After(3 * readDeadline):
	case <-t.Context().Done():
		return
	}
	// Asked in process: the question's own request is not the point.
	in, _, err := b.Create(t.Context(), hitl.CreateRequest{Question: "Still streaming?"})
	if err != nil {
		t.Fatal(err)
	}
	s.expect(t, "hitl:question", in.ID, 0)
	readWSType(t, c, "hitl:question", in.ID)
}

// TestSSEReplaysShareTheList: streams that open while nothing changes
// share one read of the pending list (and its encoding), as WebSockets do,
// rather than each holding a copy of every pending question.
func TestSSEReplaysShareTheList(t *testing.T) {
	turns.Parallel(t)
	var counted *listCounter
	ts := newTestServerWith(t, &hitltest.Options{WrapStore: func(s hitl.Store) hitl.Store {
		counted = &listCounter{Store: s}
		return counted
	}})
	var ids []string
	for i := range 3 {
		ids = append(ids, ts.create(t, map[string]any{"question": fmt.Sprintf("Question %d?", i), "context": strings.Repeat("x", 10<<10)}).ID)
	}
	counted.pages.Store(0)
	for i := range 5 {
		s := openSSE(t, ts, "", "")
		if got, _, _ := s.replay(t); fmt.Sprint(got) != fmt.Sprint(ids) {
			t.Fatalf("stream %d: replay %v, want %v", i, got, ids)
		}
		s.Close()
	}
	if pages := counted.pages.Load(); pages != 1 {
		t.Errorf("5 streams opened with nothing changing read %d pages of the pending list, want 1", pages)
	}
}
