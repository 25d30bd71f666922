package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
)

// listCounter is a store that counts the pages of interactions listed.
type listCounter struct {
	hitl.Store
	pages atomic.Int64
}

func (s *listCounter) ListInteractions(ctx context.Context, f hitl.ListFilter) ([]*hitl.Interaction, string, error) {
	s.pages.Add(1)
	return s.Store.ListInteractions(ctx, f)
}

// TestWebSocketsConnectingTogetherShareTheReplayRead connects many inboxes
// at once to a server with more pending questions than the replay cache
// keeps, while questions are still being asked: they share a few reads of
// the store (not one each, which with thousands of questions and of
// inboxes would hold thousands of copies of the list), and every inbox
// gets every question exactly once.
func TestWebSocketsConnectingTogetherShareTheReplayRead(t *testing.T) {
	turns.Parallel(t)
	var counted *listCounter
	ts := newTestServerWith(t, &hitltest.Options{WrapStore: func(s hitl.Store) hitl.Store {
		counted = &listCounter{Store: s}
		return counted
	}})
	b := ts.Broker

	const before, during, inboxes = 1100, 30, 30 // more than one page (500) and the cache (1,000)
	var (
		mu  sync.Mutex
		ids = map[string]bool{}
	)
	ask := func(n int) {
		var wg sync.WaitGroup
		for w := range 16 {
			wg.Go(func() {
				for i := w; i < n; i += 16 {
					in, _, err := b.Create(context.Background(), hitl.CreateRequest{Question: fmt.Sprintf("Question %d?", i)})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					ids[in.ID] = true
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	ask(before)
	counted.pages.Store(0)

	conns := make([]*websocket.Conn, inboxes)
	var wg sync.WaitGroup
	wg.Go(func() { ask(during) })
	for i := range conns {
		wg.Go(func() { conns[i] = dialWS(t, ts, nil) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i, c := range conns {
		got := map[string]int{}
		for len(got) < before+during {
			m := readWS(t, c)
			if m["type"] != "hitl:question" {
				continue
			}
			id, _ := m["interaction_id"].(string)
			if got[id]++; got[id] > 1 {
				t.Fatalf("inbox %d got question %s twice", i, id)
			}
			if !ids[id] {
				raw, _ := json.Marshal(m)
				t.Fatalf("inbox %d got an unknown question: %s", i, raw)
			}
		}
	}
	// Each read lists three pages.
	if reads := counted.pages.Load() / 3; reads > inboxes/3 {
		t.Errorf("%d inboxes connecting together read the pending list %d times; want them to share reads", inboxes, reads)
	}
}
