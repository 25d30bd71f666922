package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/hitl-sh/hitl"
)

// errEmptyBody is the message for a request without a body.
const errEmptyBody = "request body is empty; send a JSON object"

// maxBodyBytes bounds every request body.
const maxBodyBytes = 1 << 20

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
}

// errorBody is the JSON shape of every error.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// writeError renders err as {"error":{"code","message"}} with its status.
// Errors that are not application errors are logged and shown as
// "internal error".
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := hitl.ErrorCode(err)
	if code == hitl.EINTERNAL {
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
	writeJSON(w, status, body)
}

// writeJSON writes v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// decodeJSON reads a JSON request body into v: at most maxBodyBytes (413
// beyond), one JSON value, an object. Unknown fields are allowed, so newer
// clients work with older servers. Any Content-Type is accepted (curl -d
// sends a form type); cross-origin browser requests are refused before
// this by the CSRF protection in Handler.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
	data, err := io.ReadAll(body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return hitl.Errorf(hitl.ETOOLARGE, "request body is larger than %d bytes", maxBodyBytes)
	} else if err != nil {
		return hitl.Errorf(hitl.EINVALID, "read request body: %v", err)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return hitl.Errorf(hitl.EINVALID, "%s", errEmptyBody)
	}
	if err := json.Unmarshal(data, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return hitl.Errorf(hitl.EINVALID, "field %s must be %s", typeErr.Field, typeErr.Type)
		}
		return hitl.Errorf(hitl.EINVALID, "malformed JSON: %s", jsonProblem(err))
	}
	return nil
}

// jsonProblem describes a JSON decoding error without echoing the body.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return fmt.Sprintf("expected %s, got %s", typeErr.Type, typeErr.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) error {
	return hitl.Errorf(hitl.ENOTFOUND, "no route %s %s", r.Method, r.URL.Path)
}
