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

// publicAddr reports whether ip is an address on the public internet. An
// IPv6 address that carries an IPv4 address (see embeddedIPv4) is public
// only when what it carries is too: otherwise a NAT64 gateway or a 6to4 or
// Teredo relay could carry a connection to the server's own network.
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
	for _, v4 := range embeddedIPv4(ip) {
		if !publicAddr(v4) {
			return false
		}
	}
	return true
}

// Prefixes of the IPv6 forms that carry an IPv4 address.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")    // NAT64, well-known prefix (RFC 6052): the last 32 bits
	sixToFour  = netip.MustParsePrefix("2002::/16")       // 6to4 (RFC 3056): bits 16 to 47
	teredo     = netip.MustParsePrefix("2001::/32")       // Teredo (RFC 4380): server bits 32 to 63, client the last 32 inverted
	compatible = netip.MustParsePrefix("::/96")           // IPv4-compatible (RFC 4291, deprecated): the last 32 bits
	translated = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (RFC 2765): the last 32 bits
)

// embeddedIPv4 returns the IPv4 addresses an IPv6 address carries: the one
// a NAT64 gateway, a 6to4 relay or a translator would connect to, and for
// Teredo both the server and the client. IPv4-mapped addresses are left to
// Unmap, and the local-use NAT64 prefix (64:ff9b:1::/48) is refused whole
// by nonPublic. It returns nil for any other address.
func embeddedIPv4(ip netip.Addr) []netip.Addr {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	last := func() netip.Addr { return netip.AddrFrom4([4]byte(b[12:16])) }
	switch {
	case nat64.Contains(ip), compatible.Contains(ip), translated.Contains(ip):
		return []netip.Addr{last()}
	case sixToFour.Contains(ip):
		return []netip.Addr{netip.AddrFrom4([4]byte(b[2:6]))}
	case teredo.Contains(ip):
		client := [4]byte(b[12:16])
		for i := range client {
			client[i] ^= 0xff
		}
		return []netip.Addr{netip.AddrFrom4([4]byte(b[4:8])), netip.AddrFrom4(client)}
	}
	return nil
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
