// Package client is a Go client for a remote hitl server's native HTTP API.
//
// A *Client satisfies hitl.Service, like the in-process broker, so agent
// code can move between the two without change. Application errors from
// the server ({"error":{"code","message"}}) are returned as *hitl.Error, so
// callers test them the same way in both cases:
//
//	if errors.Is(err, hitl.ErrExpired) { … }
//
// A terminal interaction is not an error by itself: Wait returns an
// expired or cancelled interaction with a nil error, and the caller reads
// its Status and Result. To ask and wait in one call, with the outcome as
// an error, use the ask package over a Client: ask.Ask(ctx, c, req).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
)

// DefaultPollTimeout is how long each long-poll of Wait asks the server to
// hold the request.
const DefaultPollTimeout = 60 * time.Second

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// channelHeader declares the client's channel to the server (see
// server.ChannelHeader).
const channelHeader = "X-Hitl-Channel"

// Options configure a Client. The zero value (or nil) is usable.
type Options struct {
	// HTTPClient sends the requests; nil means http.DefaultClient. Its
	// Timeout, if any, must be longer than PollTimeout or every long-poll
	// of Wait fails (and is retried).
	HTTPClient *http.Client
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token string
	// Channel is the channel the client's requests come through: "api",
	// "cli", "web" or "mcp"; "" lets the server choose (api). Answers carry
	// it; "cli" and "mcp" also mark the interactions the client creates
	// and cancels (with the X-Hitl-Channel header), so the server records
	// that a question came from the command line or an MCP client.
	Channel string
	// Logger receives retry and cancellation messages; nil discards them.
	// Answer values are never logged.
	Logger *slog.Logger
	// PollTimeout is how long each long-poll of Wait may last on the
	// server; 0 means DefaultPollTimeout.
	PollTimeout time.Duration
}

// Client talks to one hitl server. It is safe for concurrent use.
type Client struct {
	base    string
	http    *http.Client
	token   string
	channel string
	log     *slog.Logger
	poll    time.Duration
}

var _ hitl.Service = (*Client)(nil)

// New returns a client for the server at baseURL, such as
// "http://127.0.0.1:7878" (a path prefix is kept, for servers behind a
// reverse proxy).
func New(baseURL string, opts *Options) *Client {
	if opts == nil {
		opts = &Options{}
	}
	c := &Client{
		base:    strings.TrimRight(baseURL, "/"),
		http:    opts.HTTPClient,
		token:   opts.Token,
		channel: opts.Channel,
		log:     opts.Logger,
		poll:    opts.PollTimeout,
	}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.poll <= 0 {
		c.poll = DefaultPollTimeout
	}
	return c
}

// BaseURL returns the server address the client talks to.
func (c *Client) BaseURL() string { return c.base }

// StatusError is a failed response that did not carry a hitl error body,
// such as a proxy's 502 page.
type StatusError struct {
	Method     string
	URL        string
	StatusCode int
	Status     string // e.g. "502 Bad Gateway"
	Body       string // the start of the body, for diagnosis
}

// Error implements the error interface.
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("hitl client: %s %s: %s", e.Method, e.URL, e.Status)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// errorBody is the server's JSON shape for every error.
type errorBody struct {
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// do sends a request with an optional JSON body and decodes a 2xx JSON
// response into out (when out is not nil). It returns the status code (0
// when no complete response arrived, with a *transportError) and, for a non-2xx response, a *hitl.Error
// decoded from the body or else a *StatusError.
func (c *Client) do(ctx context.Context, method, path string, body, out any) (int, error) {
	return c.doKey(ctx, method, path, body, out, "")
}

// doKey is do sending key, when not "", as the Idempotency-Key header.
func (c *Client) doKey(ctx context.Context, method, path string, body, out any, key string) (int, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, fmt.Errorf("hitl client: %s %s: encode request: %w", method, path, err)
		}
		rd = bytes.NewReader(data)
	}
	target := c.base + path
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return 0, fmt.Errorf("hitl client: %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.channel == hitl.ChannelCLI || c.channel == hitl.ChannelMCP {
		req.Header.Set(channelHeader, c.channel)
	}
	if key != "" {
		req.Header.Set(hitl.IdempotencyKeyHeader, key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, &transportError{fmt.Errorf("hitl client: %s %s: %w", method, req.URL.Redacted(), unwrapURLError(err))}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, responseError(req, resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		// The connection broke mid-body: a network failure like any other.
		return 0, &transportError{fmt.Errorf("hitl client: %s %s: read response: %w", method, req.URL.Redacted(), err)}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return resp.StatusCode, fmt.Errorf("hitl client: %s %s: decode response: %w", method, req.URL.Redacted(), err)
	}
	return resp.StatusCode, nil
}

// responseError turns a non-2xx response into an error: the server's
// *hitl.Error when the body is one, else a *StatusError.
func responseError(req *http.Request, resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var eb errorBody
	if json.Unmarshal(data, &eb) == nil && eb.Error != nil && eb.Error.Code != "" {
		return &hitl.Error{Code: eb.Error.Code, Message: eb.Error.Message}
	}
	snippet := strings.TrimSpace(string(data))
	if len(snippet) > 200 {
		snippet = snippet[:200] + "…"
	}
	return &StatusError{
		Method:     req.Method,
		URL:        req.URL.Redacted(),
		StatusCode: resp.StatusCode,
		Status:     resp.Status,
		Body:       snippet,
	}
}

// transportError is a request that got no complete response: the server
// is down, restarting, or the connection broke. Wait retries these.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// Is lets errors.Is(err, hitl.ErrUnreachable) match every transport error.
func (e *transportError) Is(target error) bool { return target == hitl.ErrUnreachable }

// unwrapURLError drops the *url.Error layer, whose text repeats the method
// and URL that the caller's message already gives.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
