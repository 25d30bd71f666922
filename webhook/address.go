package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/hitl-sh/hitl"
)

// Webhooks must not become a way to reach the server's own network (SSRF):
// unless an admin allows private addresses, a URL is refused when its host
// is, or resolves to, a loopback, private, link-local or otherwise
// non-public address. It is checked when the URL is given, and again by
// the dialer for every connection, since a name may resolve elsewhere by
// then (DNS rebinding).

// nonPublic are the special-purpose ranges beyond what netip's predicates
// cover (RFC 6890 and its successors) that are not on the public internet.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (carrier-grade NAT)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
}

// publicAddr reports whether ip is an address on the public internet.
func publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// errPrivate is the refusal of a non-public address.
func errPrivate(host string, ip netip.Addr) error {
	if host == ip.String() {
		return fmt.Errorf("%s is not a public address (loopback, private and link-local addresses are refused; an admin may allow them with --webhook-allow-private)", ip)
	}
	return fmt.Errorf("%s resolves to %s, which is not a public address (loopback, private and link-local addresses are refused; an admin may allow them with --webhook-allow-private)", host, ip)
}

// checkURL returns why raw cannot be a webhook's URL: not an absolute
// http(s) URL, or (unless private addresses are allowed) a host that is
// or resolves to a non-public address, or does not resolve at all.
func checkURL(ctx context.Context, resolver *net.Resolver, raw string, allowPrivate bool) error {
	if err := hitl.CheckWebhookURL(raw); err != nil {
		return err
	}
	if allowPrivate {
		return nil
	}
	host := mustHost(raw)
	if ip, err := netip.ParseAddr(host); err == nil {
		if !publicAddr(ip) {
			return hitl.Errorf(hitl.EINVALID, "%s", errPrivate(host, ip))
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return hitl.Errorf(hitl.EINVALID, "the host %s does not resolve", host)
	}
	for _, ip := range ips {
		if !publicAddr(ip) {
			return hitl.Errorf(hitl.EINVALID, "%s", errPrivate(host, ip))
		}
	}
	return nil
}

// mustHost returns the host of a URL CheckWebhookURL accepted, without
// brackets or port.
func mustHost(raw string) string {
	u, _ := url.Parse(raw)
	return u.Hostname()
}

// dialControl is a net.Dialer Control function that refuses connections
// to non-public addresses: it sees the address actually dialled, after
// any resolution.
func dialControl(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("dial %s: not an IP address", address)
	}
	if !publicAddr(ip) {
		return errRefusedAddr{ip}
	}
	return nil
}

// errRefusedAddr is the dialer's refusal of a non-public address.
type errRefusedAddr struct{ ip netip.Addr }

func (e errRefusedAddr) Error() string {
	return fmt.Sprintf("refused to connect to %s: not a public address (see --webhook-allow-private)", e.ip)
}

// refusedAddr reports whether err is the dialer's refusal.
func refusedAddr(err error) bool {
	var e errRefusedAddr
	return errors.As(err, &e)
}
