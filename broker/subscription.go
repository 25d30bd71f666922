package broker

import (
	"github.com/hitl-sh/hitl"
)

// errSlow closes a subscription whose reader fell too far behind.
var errSlow = hitl.Errorf(hitl.EUNAVAILABLE, "subscriber too slow; reconnect to resume")

// Subscription is a live stream of events. Events with Seq > Start arrive on
// C in order, each once; C is closed when the subscription ends (Err says
// why).
type Subscription struct {
	// Start is the sequence number of the newest event before the
	// subscription began; C carries only events after it.
	Start int64

	c    chan *hitl.Event
	err  error
	feed *feed
}

// C returns the channel of events.
func (s *Subscription) C() <-chan *hitl.Event { return s.c }

// Err returns why the subscription ended, once C is closed.
func (s *Subscription) Err() error {
	s.feed.mu.Lock()
	defer s.feed.mu.Unlock()
	return s.err
}

// Close ends the subscription.
func (s *Subscription) Close() {
	s.feed.mu.Lock()
	defer s.feed.mu.Unlock()
	s.feed.dropLocked(s, nil)
}

// Subscribe opens a live stream of every event from now on (with a shared
// store, every replica's events). A subscriber
// that cannot keep up is dropped rather than slowing the server. After the
// broker is closed, the returned subscription is already closed.
func (b *Broker) Subscribe() *Subscription {
	f := b.feed
	s := &Subscription{c: make(chan *hitl.Event, f.bufSize), feed: f}
	f.mu.Lock()
	defer f.mu.Unlock()
	s.Start = f.last
	if f.done {
		s.err = ErrClosed
		close(s.c)
		return s
	}
	f.subs[s] = struct{}{}
	return s
}

// Subscribers returns the number of open subscriptions.
func (b *Broker) Subscribers() int {
	b.feed.mu.Lock()
	defer b.feed.mu.Unlock()
	return len(b.feed.subs)
}
