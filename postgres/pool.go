package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// errPoolClosed is returned by acquire after Close.
var errPoolClosed = errors.New("postgres store is closed")

// checkAfter is how long a connection may sit idle before acquire pings
// it, in case the server closed it meanwhile (as pgxpool does).
const checkAfter = time.Second

// pool is a small pool of pgx connections, each keeping its own cache of
// prepared statements. (pgxpool would do, but needs a module this build
// does not have; the store only uses acquire and release, so swapping it
// in is local to this file.)
type pool struct {
	cfg   *pgx.ConnConfig
	slots chan struct{} // one token per connection in use

	mu     sync.Mutex
	idle   []idleConn // most recently used last
	closed bool
}

type idleConn struct {
	c     *pgx.Conn
	since time.Time
}

func newPool(cfg *pgx.ConnConfig, max int) *pool {
	return &pool{cfg: cfg, slots: make(chan struct{}, max)}
}

// acquire returns a connection for the caller's sole use until release: an
// idle one that is still open, or a new one. It waits while max are in use.
func (p *pool) acquire(ctx context.Context) (*pgx.Conn, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			<-p.slots
			return nil, errPoolClosed
		}
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		ic := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		if time.Since(ic.since) > checkAfter && ic.c.Ping(ctx) != nil {
			closeConn(ic.c)
			if ctx.Err() != nil {
				<-p.slots
				return nil, ctx.Err()
			}
			continue
		}
		return ic.c, nil
	}
	c, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return c, nil
}

// release returns c to the pool, or closes it when it is broken or left
// in a transaction.
func (p *pool) release(c *pgx.Conn) {
	defer func() { <-p.slots }()
	pc := c.PgConn()
	if c.IsClosed() || pc.IsBusy() || pc.TxStatus() != 'I' {
		closeConn(c)
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		closeConn(c)
		return
	}
	p.idle = append(p.idle, idleConn{c: c, since: time.Now()})
	p.mu.Unlock()
}

// close closes the idle connections; those in use close on release.
func (p *pool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.closed = true
	p.mu.Unlock()
	for _, ic := range idle {
		closeConn(ic.c)
	}
}

// closeConn closes c, giving the server a moment to hear the goodbye.
func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.Close(ctx)
}
