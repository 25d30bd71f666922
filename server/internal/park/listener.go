package park

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Listener is a net.Listener that also returns connections given back
// by parked long-polls (Wait), so net/http serves their next request.
type Listener struct {
	net.Listener
	back     chan net.Conn
	accepted chan acceptResult
	done     chan struct{}
	parked   counter          // long-polls parked and not yet answered
	gauge    prometheus.Gauge // the same, for /metrics
	every    time.Duration    // how often parked connections are looked at

	mu    sync.Mutex
	waits map[*Wait]struct{}
	sweep *time.Timer // runs while waits is not empty

	pumpOnce, closeOnce sync.Once
}

type acceptResult struct {
	c   net.Conn
	err error
}

// NewListener wraps l, the listener net/http serves on. gauge counts the
// parked long-polls (nil: none); every is how often parked connections
// are checked for clients that hung up (0: SweepInterval).
func NewListener(l net.Listener, gauge prometheus.Gauge, every time.Duration) *Listener {
	if gauge == nil {
		gauge = prometheus.NewGauge(prometheus.GaugeOpts{Name: "parked"})
	}
	if every <= 0 {
		every = SweepInterval
	}
	return &Listener{
		Listener: l,
		gauge:    gauge,
		every:    every,
		waits:    make(map[*Wait]struct{}),
		back:     make(chan net.Conn),
		accepted: make(chan acceptResult),
		done:     make(chan struct{}),
	}
}

// Accept returns the next new or given-back connection.
func (l *Listener) Accept() (net.Conn, error) {
	l.pumpOnce.Do(func() { go l.pump() })
	select {
	case c := <-l.back:
		return c, nil
	case a := <-l.accepted:
		return a.c, a.err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// pump accepts new connections for Accept until the listener closes.
func (l *Listener) pump() {
	for {
		c, err := l.Listener.Accept()
		select {
		case l.accepted <- acceptResult{c, err}:
		case <-l.done:
			if c != nil {
				_ = c.Close()
			}
			return
		}
		if err != nil && isClosed(err) {
			return
		}
	}
}

// hold counts p among the parked waits.
func (l *Listener) hold(p *Wait) {
	l.parked.add()
	l.gauge.Inc()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waits[p] = struct{}{}
	if l.sweep == nil {
		l.sweep = time.AfterFunc(l.every, l.sweepWaits)
	}
}

// release forgets p, answered or abandoned.
func (l *Listener) release(p *Wait) {
	l.mu.Lock()
	delete(l.waits, p)
	l.mu.Unlock()
	l.gauge.Dec()
	l.parked.done()
}

// sweepWaits ends the parked waits whose agents have hung up, so their
// connections and broker registrations do not outlive them until the
// wait's timeout (up to 300 s).
func (l *Listener) sweepWaits() {
	l.mu.Lock()
	ps := make([]*Wait, 0, len(l.waits))
	for p := range l.waits {
		ps = append(ps, p)
	}
	l.mu.Unlock()
	for _, p := range ps {
		if hungUp(p.nc) {
			p.hangUp()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.waits) == 0 {
		l.sweep = nil
		return
	}
	l.sweep.Reset(l.every)
}

// give hands c back to be served again, or closes it when the listener is
// closed.
func (l *Listener) give(c net.Conn) {
	select {
	case l.back <- c:
	case <-l.done:
		_ = c.Close()
	}
}

// Close stops accepting; connections given back later are closed.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// Parked returns how many long-polls are parked on l.
func (l *Listener) Parked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.waits)
}

// WaitParked waits until every long-poll parked on l has been answered,
// or ctx ends.
func (l *Listener) WaitParked(ctx context.Context) error { return l.parked.wait(ctx) }

// isClosed reports whether err says the listener is closed.
func isClosed(err error) bool { return errors.Is(err, net.ErrClosed) }

// counter counts things in flight and lets one wait for none.
type counter struct {
	mu   sync.Mutex
	n    int
	none chan struct{} // closed when n drops to 0
}

func (c *counter) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		c.none = make(chan struct{})
	}
	c.n++
}

func (c *counter) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	if c.n == 0 {
		close(c.none)
	}
}

// wait waits until nothing is in flight, or ctx ends.
func (c *counter) wait(ctx context.Context) error {
	c.mu.Lock()
	none := c.none
	n := c.n
	c.mu.Unlock()
	if n == 0 {
		return nil
	}
	select {
	case <-none:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
