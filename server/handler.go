package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/hitl-sh/hitl"
)

// Error codes of the HTTP layer alone, beside the application's: they
// describe the request as HTTP sees it, not anything the engine decides.
const (
	codeMethodNotAllowed = "method_not_allowed" // 405, with Allow
	codeTimeout          = "request_timeout"    // 408: the body came too slowly
)

// handlerFunc is an HTTP handler that returns its failure instead of
// writing it; handle renders every failure the same way.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts a handlerFunc to http.HandlerFunc.
func (s *Server) handle(fn handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}

// statusOf maps application error codes to HTTP statuses, in one table.
var statusOf = map[string]int{
	hitl.EINVALID:      http.StatusBadRequest,
	hitl.EUNAUTHORIZED: http.StatusUnauthorized,
	hitl.EFORBIDDEN:    http.StatusForbidden,
	hitl.ENOTFOUND:     http.StatusNotFound,
	hitl.ECONFLICT:     http.StatusConflict,
	hitl.EEXPIRED:      http.StatusGone,
	hitl.ECANCELLED:    http.StatusGone,
	hitl.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	hitl.EVALUE:        http.StatusUnprocessableEntity,
	hitl.ERATELIMITED:  http.StatusTooManyRequests,
	hitl.EUNAVAILABLE:  http.StatusServiceUnavailable,
	hitl.EINTERNAL:     http.StatusInternalServerError,

	codeMethodNotAllowed: http.StatusMethodNotAllowed,
	codeTimeout:          http.StatusRequestTimeout,
}

// errorBody is the JSON shape of every error.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		// Candidates are the interactions a request could have meant, when
		// it named more than one (see ambiguousError).
		Candidates []string `json:"candidates,omitempty"`
	} `json:"error"`
}

// ambiguousError is a conflict: the request named several interactions,
// and answering one of them would be a guess. Its candidates go into the
// error body, so the caller can choose.
type ambiguousError struct {
	err        *hitl.Error
	candidates []string
}

func (e *ambiguousError) Error() string { return e.err.Error() }

// Unwrap gives the application error, for its code and message.
func (e *ambiguousError) Unwrap() error { return e.err }

// writeError renders err as {"error":{"code","message"}} with its status.
// Errors that are not application errors are logged and shown as
// "internal error".
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if s.hookRefused(w, r, err) {
		return
	}
	code := hitl.ErrorCode(err)
	switch {
	case code != hitl.EINTERNAL:
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The client hung up (a page navigated away, an agent stopped):
		// the error is its leaving, not the server's fault.
		s.log.Debug("request ended by the client", "method", r.Method, "path", r.URL.Path, "error", err)
	default:
		s.log.Error("internal error", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if code == hitl.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", `Bearer realm="hitl"`)
	}
	var body errorBody
	body.Error.Code = code
	body.Error.Message = hitl.ErrorMessage(err)
	var amb *ambiguousError
	if errors.As(err, &amb) {
		body.Error.Candidates = amb.candidates
	}
	writeJSON(w, status, body)
}

// writeJSON writes v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if in, ok := v.(*hitl.Interaction); ok && in != nil {
		// What the encoder would write, without its pass over the bytes
		// MarshalJSON returns: an interaction is the commonest response.
		if b, err := in.MarshalJSON(); err == nil {
			_, _ = w.Write(append(b, '\n'))
		}
		return
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// route serves r through the mux, or, when no route matches, answers
// with a JSON error: 405 with an Allow header listing the methods the
// path does take, else 404.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern != "" {
		s.mux.ServeHTTP(w, r) // sets the pattern and path values
		return
	}
	// The mux's own answer says which case this is (and the methods).
	probe := routeProbe{header: http.Header{}}
	h.ServeHTTP(&probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		allow := probe.header.Get("Allow")
		w.Header().Set("Allow", allow)
		s.writeError(w, r, hitl.Errorf(codeMethodNotAllowed, "method %s is not allowed on %s; use %s", r.Method, r.URL.Path, allow))
		return
	}
	s.writeError(w, r, hitl.Errorf(hitl.ENOTFOUND, "no route %s %s", r.Method, r.URL.Path))
}

// routeProbe records the status and headers of the mux's answer to a
// request that no route matches.
type routeProbe struct {
	header http.Header
	status int
}

func (p *routeProbe) Header() http.Header         { return p.header }
func (p *routeProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *routeProbe) WriteHeader(status int)      { p.status = status }
