package server

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/server/internal/park"
)

// Long-poll bounds for GET /api/v1/interactions/{id}/wait.
const (
	defaultWait = 30 * time.Second
	maxWait     = 300 * time.Second
)

// handleCreate serves POST /api/v1/interactions: 201 with the new
// interaction, or 200 with the existing one on an idempotent repeat.
func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) error {
	var req hitl.CreateRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if err := s.checkCallback(r, req.CallbackURL); err != nil {
		return err
	}
	in, created, err := s.broker.Create(r.Context(), req)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		w.Header().Set("Location", "/api/v1/interactions/"+in.ID)
	}
	writeJSON(w, status, in)
	return nil
}

// handleGet serves GET /api/v1/interactions/{id}.
func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) error {
	in, err := s.broker.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, in)
	return nil
}

// handleList serves GET /api/v1/interactions with the filters of
// listFilter (status, idempotency_key, agent, type, channel, q, sort,
// cursor, limit).
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) error {
	f, err := listFilter(r.URL.Query())
	if err != nil {
		return err
	}
	list, next, err := s.broker.List(r.Context(), f)
	if err != nil {
		return err
	}
	tail := `,"next_cursor":null`
	if next != "" {
		cursor, _ := json.Marshal(next)
		tail = `,"next_cursor":` + string(cursor)
	}
	out := startList(w, "interactions") // {"interactions": […], "next_cursor": …}
	for _, in := range list {
		out.add(in)
	}
	if err := out.end(tail); err != nil {
		abortList()
	}
	return nil
}

// handleWait serves GET /api/v1/interactions/{id}/wait?timeout=SECONDS: the
// interaction once terminal, or as it stands (pending) when the timeout
// passes or the server shuts down, so the agent simply polls again.
func (s *Server) handleWait(w http.ResponseWriter, r *http.Request) error {
	d := defaultWait
	if v := r.URL.Query().Get("timeout"); v != "" {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) {
			return hitl.Errorf(hitl.EINVALID, "timeout must be a number of seconds between 0 and %d", int(maxWait.Seconds()))
		}
		d = min(time.Duration(secs*float64(time.Second)), maxWait)
	}
	// Parked: plain HTTP/1.x GETs served through Listener (a HEAD's
	// response has no body, which net/http handles), once heldWaitsMax
	// others wait in their handlers.
	l := s.parking.Load()
	if !s.held.hold(l != nil && r.Method == http.MethodGet && r.ProtoMajor == 1 && r.TLS == nil) {
		return s.parkWait(w, r, l, d)
	}
	defer s.held.done()
	watched, stop := hitl.WatchCredentials(r.Context())
	defer stop()
	ctx, cancel := context.WithTimeout(watched, d)
	defer cancel()
	in, err := s.broker.Wait(ctx, r.PathValue("id"))
	switch {
	case errors.Is(context.Cause(watched), hitl.ErrCredentialsEnded):
		return hitl.ErrCredentialsEnded
	case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil,
		errors.Is(err, broker.ErrClosed):
		// Still pending: report the current state.
	case err != nil:
		return err
	}
	writeJSON(w, http.StatusOK, in)
	return nil
}

// respondRequest is the body of POST /api/v1/interactions/{id}/respond.
type respondRequest struct {
	Value   json.RawMessage `json:"value"`
	Channel string          `json:"channel,omitempty"` // api (default), cli or web
}

// handleRespond serves POST /api/v1/interactions/{id}/respond. An
// Idempotency-Key header is stored with the answer: its retry (same
// caller, value and key) gets the same 200 (see broker.RespondIdempotent).
func (s *Server) handleRespond(w http.ResponseWriter, r *http.Request) error {
	var req respondRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if err := requireValue("value", req.Value); err != nil {
		return err
	}
	ctx, err := withChannel(r.Context(), req.Channel)
	if err != nil {
		return err
	}
	in, err := s.broker.RespondIdempotent(ctx, r.PathValue("id"), req.Value, r.Header.Get(hitl.IdempotencyKeyHeader))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, in)
	return nil
}

// withChannel records which client channel an answer came through. Only
// channels a plain HTTP client can honestly claim are accepted.
func withChannel(ctx context.Context, channel string) (context.Context, error) {
	switch channel {
	case "":
		return ctx, nil
	case hitl.CallerFrom(ctx).Channel:
		return ctx, nil
	case hitl.ChannelAPI, hitl.ChannelCLI, hitl.ChannelWeb:
		c := hitl.CallerFrom(ctx)
		if c.Channel == hitl.ChannelEmbed {
			// An embed token answers through the embedded prompt only.
			return nil, hitl.Errorf(hitl.EINVALID, "an embed token answers on the embed channel")
		}
		c.Channel = channel
		return hitl.WithCaller(ctx, c), nil
	}
	return nil, hitl.Errorf(hitl.EINVALID, "channel must be api, cli or web")
}

// cancelRequest is the optional body of POST .../cancel.
type cancelRequest struct {
	Reason string `json:"reason"`
}

// handleCancel serves POST /api/v1/interactions/{id}/cancel.
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) error {
	var req cancelRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &req); err != nil && !isEmptyBody(err) {
			return err
		}
	}
	in, err := s.broker.Cancel(r.Context(), r.PathValue("id"), req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, in)
	return nil
}

func isEmptyBody(err error) bool {
	var e *hitl.Error
	return errors.As(err, &e) && e.Code == hitl.EINVALID && e.Message == errEmptyBody
}

// parkWait serves a wait of up to d without holding a goroutine: unless
// the interaction has already ended, the connection is taken from net/http
// and parked (park.Wait) until the answer or the timeout, then given back
// to l.
func (s *Server) parkWait(w http.ResponseWriter, r *http.Request, l *park.Listener, d time.Duration) error {
	p := l.NewWait(!r.Close)
	in, stop, err := s.broker.WaitFunc(r.Context(), r.PathValue("id"), p.Wake)
	if stop == nil {
		p.Forget()
		if err != nil && !errors.Is(err, broker.ErrClosed) {
			return err
		}
		writeJSON(w, http.StatusOK, in)
		return nil
	}
	return p.Park(w, in, stop, d, s.parkCheck(r))
}

// credentialCheckTimeout bounds a parked long-poll's look at its
// credentials.
const credentialCheckTimeout = 10 * time.Second

// parkCheck is how a parked long-poll made with r's credentials checks
// that they still hold (as streams do), and the 401 that ends it when
// they do not.
func (s *Server) parkCheck(r *http.Request) *park.Check {
	cred := credentialFrom(r.Context())
	if cred.kind == "" {
		return nil
	}
	// The request's context ends when the handler returns; the check
	// outlives it.
	ctx := context.WithoutCancel(r.Context())
	return &park.Check{
		Every: s.auth.recheck,
		Holds: func() bool {
			cctx, cancel := context.WithTimeout(ctx, credentialCheckTimeout)
			defer cancel()
			return s.holds(cctx, cred)
		},
		Refusal: credentialsEndedBody,
	}
}

// credentialsEndedBody is the body of the 401 that ends a parked
// long-poll whose credentials no longer hold: the same for every wait.
var credentialsEndedBody = func() []byte {
	var body errorBody
	body.Error.Code, body.Error.Message = hitl.EUNAUTHORIZED, hitl.ErrorMessage(hitl.ErrCredentialsEnded)
	b, _ := json.Marshal(body)
	return b
}()
