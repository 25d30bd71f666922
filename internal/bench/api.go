package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// api is the benchmark's HTTP/1.1 client for the native API: a pool of
// keep-alive connections speaking plain HTTP/1.1, with no goroutines of its
// own, so that the load generator spends as little of the machine's CPU as
// it can (net/http's client costs several times more per request). It
// decodes only the fields it needs.
type api struct {
	host    string // host:port
	prefix  string // path prefix of the base URL
	auth    string // the Authorization header line, or ""
	idle    chan *httpConn
	timeout time.Duration // bounds each request and its response
}

// httpConn is one keep-alive connection.
type httpConn struct {
	c     net.Conn
	br    *bufio.Reader
	buf   []byte    // the request being written
	since time.Time // idle since
}

// maxIdle is how long a connection is kept idle for the next request:
// well below the server's idle timeout (two minutes), so that a request
// never goes out on a connection the server is closing. A phase that
// leaves the API idle for longer (the command hooks' runs) then dials.
const maxIdle = 30 * time.Second

// requestTimeout bounds one request and its response: longer than any the
// benchmark makes on purpose (a long-poll asks for pollTimeout), so that a
// server that stops answering fails the run, naming the request, instead
// of holding it for good.
const requestTimeout = pollTimeout + time.Minute

// newAPI returns a client for srv keeping up to conns idle connections.
func newAPI(srv *Server, conns int) *api {
	u, err := url.Parse(srv.URL)
	if err != nil {
		u = &url.URL{Host: strings.TrimPrefix(srv.URL, "http://")}
	}
	return &api{host: u.Host, prefix: strings.TrimSuffix(u.Path, "/"), auth: srv.authHeader(), idle: make(chan *httpConn, conns), timeout: requestTimeout}
}

// close drops the idle connections.
func (a *api) close() {
	for {
		select {
		case hc := <-a.idle:
			hc.c.Close()
		default:
			return
		}
	}
}

// ixn is the part of an interaction the benchmark reads.
type ixn struct {
	ID     string `json:"interaction_id"`
	Status string `json:"status"`
}

// statusError is a response with an unexpected status.
type statusError struct {
	method, path string
	status       int
	body         string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: status %d: %s", e.method, e.path, e.status, e.body)
}

// do sends a request and decodes a 2xx response into out; any other
// status is a *statusError.
func (a *api) do(ctx context.Context, method, path string, body []byte, out *ixn) error {
	status, data, err := a.roundTrip(ctx, method, path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if status < 200 || status > 299 {
		if len(data) > 200 {
			data = data[:200]
		}
		return &statusError{method, path, status, string(bytes.TrimSpace(data))}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode response: %w", method, path, err)
		}
	}
	return nil
}

// roundTrip sends one request on an idle connection (or a new one) and
// returns the response's status and body.
func (a *api) roundTrip(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	var hc *httpConn
	select {
	case hc = <-a.idle:
		if time.Since(hc.since) > maxIdle {
			hc.c.Close()
			hc = nil
		}
	default:
	}
	if hc == nil {
		c, err := dialTCP(ctx, a.host, nil)
		if err != nil {
			return 0, nil, err
		}
		hc = &httpConn{c: c, br: bufio.NewReaderSize(c, 4096)}
	}
	// The request has a.timeout; cancellation interrupts the connection's
	// I/O at once (set after the timeout, so that it wins). Either way the
	// connection is then not reused.
	_ = hc.c.SetDeadline(time.Now().Add(a.timeout))
	stop := context.AfterFunc(ctx, func() { _ = hc.c.SetDeadline(time.Unix(1, 0)) })
	b := append(hc.buf[:0], method...)
	b = append(b, ' ')
	b = append(b, a.prefix...)
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, a.host...)
	b = append(b, "\r\n"...)
	b = append(b, a.auth...)
	if body != nil {
		b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, body...)
	hc.buf = b
	_, err := hc.c.Write(b)
	var (
		status int
		data   []byte
		reuse  bool
	)
	if err == nil {
		status, data, reuse, err = readResponse(hc.br)
	}
	if !stop() {
		// ctx ended during the exchange.
		hc.c.Close()
		if err == nil {
			err = ctx.Err()
		}
		return 0, nil, err
	}
	if err != nil || !reuse {
		hc.c.Close()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = fmt.Errorf("no response within %s: %w", a.timeout, err)
		}
		if err != nil {
			return 0, nil, err
		}
		return status, data, nil
	}
	hc.since = time.Now()
	select {
	case a.idle <- hc:
	default:
		hc.c.Close()
	}
	return status, data, nil
}

// readResponse reads one HTTP/1.1 response: its status, its body (by
// Content-Length or chunked), and whether the connection may be reused.
func readResponse(br *bufio.Reader) (status int, body []byte, reuse bool, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, nil, false, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, nil, false, fmt.Errorf("malformed status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, nil, false, fmt.Errorf("malformed status line %q", line)
	}
	length, chunked, reuse := -1, false, true
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return 0, nil, false, err
		}
		if len(line) <= 2 {
			break
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		v = bytes.TrimSpace(v)
		switch {
		case asciiEqualFold(k, "Content-Length"):
			if length, err = strconv.Atoi(string(v)); err != nil {
				return 0, nil, false, fmt.Errorf("malformed Content-Length %q", v)
			}
		case asciiEqualFold(k, "Transfer-Encoding"):
			chunked = asciiEqualFold(v, "chunked")
		case asciiEqualFold(k, "Connection"):
			reuse = !asciiEqualFold(v, "close")
		}
	}
	switch {
	case chunked:
		body, err = readChunked(br)
	case length >= 0:
		body = make([]byte, length)
		_, err = io.ReadFull(br, body)
	default:
		body, err = io.ReadAll(br)
		reuse = false
	}
	return status, body, reuse && err == nil, err
}

// readChunked reads a chunked body and its trailer.
func readChunked(br *bufio.Reader) ([]byte, error) {
	var body []byte
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		size, _, _ := bytes.Cut(bytes.TrimSpace(line), []byte(";"))
		n, err := strconv.ParseInt(string(size), 16, 64)
		if err != nil || n < 0 || n > maxMessage {
			return nil, fmt.Errorf("malformed chunk size %q", line)
		}
		if n == 0 {
			for { // trailer
				line, err := br.ReadSlice('\n')
				if err != nil {
					return nil, err
				}
				if len(line) <= 2 {
					return body, nil
				}
			}
		}
		start := len(body)
		body = append(body, make([]byte, n+2)...)
		if _, err := io.ReadFull(br, body[start:]); err != nil {
			return nil, err
		}
		body = body[:start+int(n)]
	}
}

// asciiEqualFold reports whether b equals s, ignoring ASCII case.
func asciiEqualFold(b []byte, s string) bool {
	return len(b) == len(s) && strings.EqualFold(string(b), s)
}

// create asks an approval question tagged with source and returns its id.
func (a *api) create(ctx context.Context, source string, n int) (string, error) {
	body := fmt.Appendf(nil, `{"interaction_type":"approval","question":"bench %s #%d: deploy build %d to production?","source_agent":%q,"timeout":3600}`, source, n, n, source)
	var in ixn
	if err := a.do(ctx, "POST", "/api/v1/interactions", body, &in); err != nil {
		return "", err
	}
	if in.ID == "" {
		return "", errors.New("create: response has no interaction_id")
	}
	return in.ID, nil
}

var approveBody = []byte(`{"value":true}`)

// respond approves the interaction.
func (a *api) respond(ctx context.Context, id string) error {
	return a.do(ctx, "POST", "/api/v1/interactions/"+id+"/respond", approveBody, nil)
}

// cancel withdraws the interaction.
func (a *api) cancel(ctx context.Context, id string) error {
	return a.do(ctx, "POST", "/api/v1/interactions/"+id+"/cancel", nil, nil)
}

// pendingAtLeast reports whether the server has n or more pending
// interactions.
func (a *api) pendingAtLeast(ctx context.Context, n int) (bool, error) {
	seen, cursor := 0, ""
	for seen < n {
		path := "/api/v1/interactions?status=pending&limit=500"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		status, data, err := a.roundTrip(ctx, "GET", path, nil)
		if err != nil {
			return false, fmt.Errorf("GET %s: %w", path, err)
		}
		if status != 200 {
			return false, &statusError{"GET", path, status, string(bytes.TrimSpace(data))}
		}
		var page struct {
			Interactions []struct{} `json:"interactions"`
			NextCursor   string     `json:"next_cursor"`
		}
		if err := json.Unmarshal(data, &page); err != nil {
			return false, fmt.Errorf("GET %s: decode response: %w", path, err)
		}
		seen += len(page.Interactions)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	return seen >= n, nil
}

// wait long-polls the interaction for up to timeout and returns its
// status then.
func (a *api) wait(ctx context.Context, id string, timeout time.Duration) (string, error) {
	var in ixn
	path := "/api/v1/interactions/" + id + "/wait?timeout=" + strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64)
	if err := a.do(ctx, "GET", path, nil, &in); err != nil {
		return "", err
	}
	return in.Status, nil
}
