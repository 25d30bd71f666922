package webhook

import (
	"context"
	"net"
	"net/http"
	"time"
)

// Other channels that send to URLs they are given (Web Push endpoints,
// which browsers choose) guard against SSRF the same way webhooks do.

// CheckPublicURL returns why raw cannot be sent to: not an absolute
// http(s) URL, or (unless allowPrivate) a host that is or resolves to a
// loopback, private, link-local or otherwise non-public address.
func CheckPublicURL(ctx context.Context, raw string, allowPrivate bool) error {
	return checkURL(ctx, net.DefaultResolver, raw, allowPrivate)
}

// PublicClient returns an HTTP client like the one webhooks are sent with:
// no proxy, no redirects, each request bounded by timeout, and unless
// allowPrivate a dialer that refuses non-public addresses (checked at
// every connection, against DNS rebinding).
func PublicClient(timeout time.Duration, allowPrivate bool) *http.Client {
	return newClient(timeout, allowPrivate)
}
