package server

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/stack"
)

// ChannelHeader lets a client declare the channel its requests come
// through, so an interaction records where it was created: "cli" for the
// hitl command line and "mcp" for the hitl mcp bridge. Without it the
// channel is "api"; any other value is refused.
const ChannelHeader = "X-Hitl-Channel"

// identify authenticates the request (see authenticate) and puts the
// caller's identity in the request context: "local", an admin, when no
// user or token exists yet.
func (s *Server) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, cred, ok := s.authenticate(w, r)
		if !ok {
			return // refused
		}
		switch ch := r.Header.Get(ChannelHeader); ch {
		case "":
		case hitl.ChannelCLI, hitl.ChannelMCP:
			caller.Channel = ch
		default:
			s.writeError(w, r, hitl.Errorf(hitl.EINVALID, "%s must be %s or %s; got %q", ChannelHeader, hitl.ChannelCLI, hitl.ChannelMCP, ch))
			return
		}
		s.admit(w, r, caller, cred, next)
	})
}

// statusRecorder remembers the status a handler wrote, or that it took
// the connection over.
type statusRecorder struct {
	http.ResponseWriter
	status   int
	hijacked bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer
// (flushing for SSE).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Hijack hands the connection to the handler (WebSockets, parked
// long-polls), which answers on it after the handler returns.
func (r *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(r.ResponseWriter).Hijack()
	r.hijacked = err == nil
	return c, rw, err
}

// grownStack serves each request on a stack grown at once to the depth
// requests reach (stack.Grow), not doubled and copied on the way down: a
// request is often the first on its goroutine, as each one after a
// parked long-poll is.
func grownStack(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stack.Grow()
		next.ServeHTTP(w, r)
	})
}

// logRequests logs method, path, status and duration of each request —
// never bodies, so answers never reach the log.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.hijacked {
			// The response, if any, is written later on the connection.
			s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "hijacked", true, "duration_ms", float64(time.Since(start).Microseconds())/1000)
			return
		}
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "duration_ms", float64(time.Since(start).Microseconds())/1000)
	})
}

// recoverPanics turns a panic in a handler into a logged 500.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic in handler", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				s.writeError(w, r, hitl.Errorf(hitl.EINTERNAL, "internal error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// bodyReadTimeout is how long a request's body may take to arrive, from
// the end of its headers: a megabyte (the most a body may be) at 300
// kbit/s. Headers have their own bound (http.Server.ReadHeaderTimeout).
const bodyReadTimeout = 30 * time.Second

// bodyDeadline bounds the time a request with a body may take to send
// it, so that clients sending slowly (or not at all) cannot each hold a
// goroutine and a connection for long. It sets a read deadline on the
// connection, which works under any http.Server; net/http clears it
// once the body has been read to its end, before it watches the
// connection for a hang-up (and when a handler takes the connection
// over), so long-polls and streams that outlive it are unaffected.
// Requests without a body get none: net/http is already reading their
// connection in the background, and a deadline would end that read as a
// hang-up.
func (s *Server) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.bodyTimeout))
			if err != nil && !errors.Is(err, http.ErrNotSupported) {
				s.log.Debug("set a request body deadline", "path", r.URL.Path, "error", err)
			}
		}
		next.ServeHTTP(w, r)
	})
}
