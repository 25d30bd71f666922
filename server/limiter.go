package server

import (
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiterSweep is how often a limiter forgets clients whose bucket has
// filled up again.
const limiterSweep = time.Minute

// limiter is a token bucket per client (golang.org/x/time/rate), keyed by
// whatever the caller names it: the address for logins, the person or
// token for answers.
type limiter struct {
	rate  rate.Limit
	burst int
	now   func() time.Time

	mu        sync.Mutex
	clients   map[string]*limitedClient
	lastSweep time.Time
}

type limitedClient struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiter(r rate.Limit, burst int, now func() time.Time) *limiter {
	return &limiter{rate: r, burst: burst, now: now, clients: make(map[string]*limitedClient), lastSweep: now()}
}

// allow takes one token from key's bucket. When there is none it takes
// nothing and returns false with how long until there will be one.
func (l *limiter) allow(key string) (bool, time.Duration) {
	if l.rate == rate.Inf {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= limiterSweep {
		l.sweepLocked(now)
	}
	c := l.clients[key]
	if c == nil {
		c = &limitedClient{lim: rate.NewLimiter(l.rate, l.burst)}
		l.clients[key] = c
	}
	c.seen = now
	r := c.lim.ReserveN(now, 1)
	if !r.OK() {
		return false, time.Hour // burst 0: never
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweepLocked forgets clients idle long enough for their bucket to be full
// again: a new bucket is the same.
func (l *limiter) sweepLocked(now time.Time) {
	l.lastSweep = now
	full := time.Duration(float64(l.burst) / float64(l.rate) * float64(time.Second))
	for key, c := range l.clients {
		if now.Sub(c.seen) > full {
			delete(l.clients, key)
		}
	}
}

// clientIP is the address a request came from, without the port. Behind a
// reverse proxy that is the proxy's.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
