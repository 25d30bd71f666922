package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// api is the benchmark's HTTP client for the native API: plain net/http
// with keep-alive connections, decoding only the fields it needs.
type api struct {
	base string
	hc   *http.Client
}

// newAPI returns a client for base keeping up to conns idle connections.
func newAPI(base string, conns int) *api {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &api{base: base, hc: &http.Client{Transport: tr}}
}

// close drops the idle connections.
func (a *api) close() { a.hc.CloseIdleConnections() }

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
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read response: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if len(data) > 200 {
			data = data[:200]
		}
		return &statusError{method, path, resp.StatusCode, string(bytes.TrimSpace(data))}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode response: %w", method, path, err)
		}
	}
	return nil
}

// create asks an approval question tagged with source and returns its id.
func (a *api) create(ctx context.Context, source string, n int) (string, error) {
	body := fmt.Appendf(nil, `{"interaction_type":"approval","question":"bench %s #%d: deploy build %d to production?","source_agent":%q,"timeout":3600}`, source, n, n, source)
	var in ixn
	if err := a.do(ctx, http.MethodPost, "/api/v1/interactions", body, &in); err != nil {
		return "", err
	}
	if in.ID == "" {
		return "", fmt.Errorf("create: response has no interaction_id")
	}
	return in.ID, nil
}

var approveBody = []byte(`{"value":true}`)

// respond approves the interaction.
func (a *api) respond(ctx context.Context, id string) error {
	return a.do(ctx, http.MethodPost, "/api/v1/interactions/"+id+"/respond", approveBody, nil)
}

// cancel withdraws the interaction.
func (a *api) cancel(ctx context.Context, id string) error {
	return a.do(ctx, http.MethodPost, "/api/v1/interactions/"+id+"/cancel", nil, nil)
}

// wait long-polls the interaction for up to timeout and returns its
// status then.
func (a *api) wait(ctx context.Context, id string, timeout time.Duration) (string, error) {
	var in ixn
	path := "/api/v1/interactions/" + id + "/wait?timeout=" + strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64)
	if err := a.do(ctx, http.MethodGet, path, nil, &in); err != nil {
		return "", err
	}
	return in.Status, nil
}
