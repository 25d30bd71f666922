package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// runHealth asks a running server's /readyz whether it is ready: the
// container image's HEALTHCHECK, which has no shell or curl to do it.
// Exit codes: 0 ready, 1 not ready or unreachable, 2 for bad flags.
func runHealth(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("health", "hitl health [flags]",
		"Asks the server listening on --addr whether it is ready (GET /readyz: the\n"+
			"database answers) and exits 0 when it is, 1 when it is not or cannot be\n"+
			"reached. An unspecified host (0.0.0.0, [::]) is asked on loopback, so the\n"+
			"same HITL_ADDR serves hitl serve and its health check.", stderr)
	addr := fs.String("addr", envOr("HITL_ADDR", defaultAddr), "`host:port` hitl serve listens on (HITL_ADDR)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hitl health: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	u, err := readyURL(*addr)
	if err != nil {
		fmt.Fprintf(stderr, "hitl health: %v\n", err)
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprintln(stderr, "hitl health: --timeout must be positive")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		fmt.Fprintf(stderr, "hitl health: %v\n", err)
		return 2
	}
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := hc.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "hitl health: %s: %v\n", u, err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "hitl health: %s: %s %s\n", u, resp.Status, strings.TrimSpace(string(body)))
		return 1
	}
	fmt.Fprintf(stdout, "ready: %s\n", u)
	return 0
}

// readyURL is the /readyz URL of a server listening on addr, with an
// unspecified or empty host replaced by loopback.
func readyURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr must be host:port; got %q", addr)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz", nil
}
