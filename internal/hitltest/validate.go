package hitltest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hitl-sh/hitl/openapi"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
)

// maxRecorded bounds the response body kept for validation; a larger body
// is passed on but its content not checked.
const maxRecorded = 8 << 20

// freeForm are the places in responses that hold JSON of the caller's
// making, which strict validation leaves alone (see documentValidator):
// everything under these fields, however its keys are written ($.a.b, or
// $.a['b c'] for a key that is not a plain name). The counts' by_agent and
// by_type are maps keyed by agents' names, which strict mode would take
// for undeclared properties.
var freeForm = func() []string {
	var out []string
	for _, name := range []string{"form_schema", "args_schema", "metadata", "default_response", "value", "args", "equals", "updatedInput", "by_agent", "by_type"} {
		out = append(out, "$.body**."+name+".**", "$.body**."+name+"['**")
	}
	return append(out, "$.headers.**")
}()

var (
	docOnce      sync.Once
	docValidator validator.Validator
	docErr       error
	// docMu serialises the validator's use: in strict mode it compiles
	// and renders schemas lazily, writing to the shared document model,
	// which raced when the servers of parallel tests validated at once
	// (libopenapi's DynamicValue, seen under -race).
	docMu sync.Mutex
)

// documentValidator returns the validator of the openapi package's
// document, built once for the test binary.
func documentValidator() (validator.Validator, error) {
	docOnce.Do(func() {
		doc, err := libopenapi.NewDocument(openapi.JSON)
		if err != nil {
			docErr = fmt.Errorf("parse the OpenAPI document: %w", err)
			return
		}
		v, errs := validator.NewValidator(doc, config.WithFormatAssertions(),
			// Strict: a field the document does not name fails, so the
			// document keeps up with every field the server sends;
			// but for free-form JSON (schemas, metadata, an action's
			// arguments, the values of answers) and headers, which are
			// not all listed.
			config.WithStrictMode(), config.WithStrictIgnorePaths(freeForm...))
		if len(errs) > 0 {
			docErr = fmt.Errorf("build the OpenAPI validator: %w", errors.Join(errs...))
			return
		}
		docValidator = v
	})
	return docValidator, docErr
}

// ValidateResponses returns h wrapped so that every response it writes is
// checked against hitl's OpenAPI document (the openapi package): its
// status must be one the document gives the operation, its Content-Type
// one the document names, its body must fit the schema, and the headers
// the document requires must be there. A response that does not fit fails
// t when the test ends, with the request's method and path, the status and
// the validator's message. A request for a path or method the document
// does not have must get the refusal the document describes: 404, or 405
// with Allow, in the error body (or 401 or 403, or the router's redirect
// to the canonical path).
//
// Not checked: /mcp (MCP's own protocol), /metrics (Prometheus' format),
// the OpenAPI document itself, HEAD requests (no body), the bodies of
// event streams, and WebSockets once upgraded (see CheckStreamMessage for
// their messages). A long-poll answered on a parked connection
// (server.Listener) is checked as it is written.
//
// Register it before the server's own cleanup (hitltest.Start does), so
// that every request has ended when the failures are reported.
func ValidateResponses(t testing.TB, h http.Handler) http.Handler {
	t.Helper()
	v, err := documentValidator()
	if err != nil {
		t.Fatal(err)
	}
	c := &checker{v: v}
	t.Cleanup(func() {
		for _, f := range c.done() {
			t.Errorf("response not described by openapi/openapi.json: %s", f)
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if skipped(r) {
			h.ServeHTTP(w, r)
			return
		}
		rec := &recorder{ResponseWriter: w, c: c, req: r}
		h.ServeHTTP(rec, r)
		if !rec.hijacked {
			rec.finish()
		}
	})
}

// skipped reports whether r's response is not checked at all: a HEAD (no
// body), a CORS preflight (answered before any route, for the embed
// origins' pages), MCP (its own protocol), Prometheus' format, and the
// OpenAPI document itself (whose fields are not this API's).
func skipped(r *http.Request) bool {
	p := r.URL.Path
	return r.Method == http.MethodHead || r.Method == http.MethodOptions || p == "/metrics" || p == "/mcp" || strings.HasPrefix(p, "/mcp/") || p == "/api/v1/openapi.json"
}

// checker validates responses and keeps the failures for the test's end.
type checker struct {
	v validator.Validator

	mu       sync.Mutex
	failures []string
	closed   bool
}

// check validates one response to req. The body of an event stream is
// not kept: its status, media type and headers are still checked.
func (c *checker) check(req *http.Request, status int, header http.Header, body []byte) {
	// The validator reads what it needs of the request: the method, the
	// path and the headers; never its body, which the handler consumed.
	vreq := req.Clone(req.Context())
	vreq.Body = http.NoBody
	resp := &http.Response{
		StatusCode: status,
		Header:     header,
		Body:       io.NopCloser(bytes.NewReader(body)),
		Request:    vreq,
	}
	docMu.Lock()
	ok, errs := c.v.ValidateHttpResponse(vreq, resp)
	docMu.Unlock()
	if ok {
		return
	}
	if undocumented(errs) {
		if routerRefusal(status, header, body) {
			return
		}
		c.fail(req, status, fmt.Sprintf("the document has no operation %s %s, and the response is not the refusal of an unknown route (401, 403, 404, or 405 with Allow, in the error body)", req.Method, req.URL.Path))
		return
	}
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, describe(e))
	}
	c.fail(req, status, strings.Join(msgs, "; "))
}

// fail records a failure, unless the test has ended.
func (c *checker) fail(req *http.Request, status int, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.failures = append(c.failures, fmt.Sprintf("%s %s: status %d: %s", req.Method, req.URL.RequestURI(), status, msg))
	}
}

// done returns the failures and stops recording more.
func (c *checker) done() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return c.failures
}

// undocumented reports whether errs say the document has no such path,
// or no such method on it.
func undocumented(errs []*verrors.ValidationError) bool {
	for _, e := range errs {
		if e.ValidationSubType == "missing" && e.ValidationType == "path" || e.ValidationSubType == "missingOperation" {
			return true
		}
	}
	return false
}

// routerRefusal reports whether a response to a route the document does
// not have is the refusal the document's description promises: 404
// not_found, or 405 method_not_allowed with Allow, in the error body;
// 401 or 403 (credentials are checked before the route is looked up); or
// the router's redirect to the canonical path.
func routerRefusal(status int, header http.Header, body []byte) bool {
	want := map[int]string{
		http.StatusUnauthorized:     "unauthorized",
		http.StatusForbidden:        "forbidden",
		http.StatusNotFound:         "not_found",
		http.StatusMethodNotAllowed: "method_not_allowed",
	}
	switch status {
	case http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return header.Get("Location") != ""
	case http.StatusMethodNotAllowed:
		if header.Get("Allow") == "" {
			return false
		}
	}
	mt, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	var e struct {
		Error *struct {
			Code    string  `json:"code"`
			Message *string `json:"message"`
		} `json:"error"`
	}
	return mt == "application/json" && json.Unmarshal(body, &e) == nil &&
		e.Error != nil && e.Error.Message != nil && want[status] != "" && e.Error.Code == want[status]
}

// describe renders a validation error with the schema failures under it.
func describe(e *verrors.ValidationError) string {
	var b strings.Builder
	b.WriteString(e.Message)
	if e.Reason != "" {
		b.WriteString(" (" + e.Reason + ")")
	}
	for _, f := range e.SchemaValidationErrors {
		at := f.FieldPath
		if at == "" {
			at = "$"
		}
		fmt.Fprintf(&b, " [%s at %s]", f.Reason, at)
	}
	return b.String()
}

// isStream reports whether header is that of an event stream.
func isStream(header http.Header) bool {
	mt, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	return mt == "text/event-stream"
}

// recorder passes a response on while keeping what validation needs.
type recorder struct {
	http.ResponseWriter
	c   *checker
	req *http.Request

	status   int
	header   http.Header // as it was when the status was written
	body     bytes.Buffer
	stream   bool // an event stream: the body is not kept
	over     bool // the body was larger than maxRecorded
	hijacked bool
}

// WriteHeader records the status and the headers.
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status = code
		r.header = r.ResponseWriter.Header().Clone()
		r.stream = isStream(r.header)
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write records the body.
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	switch {
	case r.stream || r.over:
	case r.body.Len()+len(b) > maxRecorded:
		r.over = true
	default:
		r.body.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

// Flush flushes the response (event streams).
func (r *recorder) Flush() {
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Hijack hands the connection over. A WebSocket's is passed as it is; any
// other (a parked long-poll) is watched for the response written on it.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, rw, err := http.NewResponseController(r.ResponseWriter).Hijack()
	if err != nil {
		return nc, rw, err
	}
	r.hijacked = true
	if r.req.URL.Path == "/ws" || strings.HasPrefix(r.req.URL.Path, "/ws/") {
		return nc, rw, nil
	}
	return &watchedConn{Conn: nc, c: r.c, req: r.req}, rw, nil
}

// finish validates the response once the handler has returned.
func (r *recorder) finish() {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK) // nothing written: an empty 200
	}
	if r.over {
		return
	}
	r.c.check(r.req, r.status, r.header, r.body.Bytes())
}

// watchedConn is a hijacked connection whose first response (written by
// a parked long-poll, in one piece) is validated before it is sent on.
// After it the connection goes back to the server and passes everything.
type watchedConn struct {
	net.Conn
	c   *checker
	req *http.Request

	mu   sync.Mutex
	buf  []byte
	seen bool
}

// Write validates the response once it is complete, then sends it on.
func (w *watchedConn) Write(b []byte) (int, error) {
	w.mu.Lock()
	if w.seen {
		w.mu.Unlock()
		return w.Conn.Write(b)
	}
	w.buf = append(w.buf, b...)
	resp, body, err := readResponse(w.buf, w.req)
	if err == nil {
		w.seen, w.buf = true, nil
	}
	w.mu.Unlock()
	if err == nil {
		w.c.check(w.req, resp.StatusCode, resp.Header, body)
	}
	return w.Conn.Write(b)
}

// SyscallConn reaches the socket underneath, as the server's check for
// agents that hung up does.
func (w *watchedConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := w.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return sc.SyscallConn()
}

// readResponse parses a whole HTTP response from b, or fails when b does
// not hold one yet.
func readResponse(b []byte, req *http.Request) (*http.Response, []byte, error) {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	return resp, body, nil
}
