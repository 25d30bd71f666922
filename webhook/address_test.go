package webhook

import (
	"context"
	"net"
	"testing"

	"github.com/hitl-sh/hitl"
)

// IPv6 forms that carry an IPv4 address (NAT64, 6to4, Teredo,
// IPv4-compatible, IPv4-mapped and -translated) are as public as the
// address they carry: a URL naming one is refused when given and when
// dialled if what it carries is loopback, private, link-local or otherwise
// not public, and allowed when what it carries is public.
func TestEmbeddedIPv4(t *testing.T) {
	tests := []struct {
		host   string
		public bool
	}{
		// NAT64, the well-known prefix (RFC 6052).
		{"64:ff9b::a9fe:a9fe", false}, // 169.254.169.254
		{"64:ff9b::7f00:1", false},    // 127.0.0.1
		{"64:ff9b::a01:203", false},   // 10.1.2.3
		{"64:ff9b::c0a8:a", false},    // 192.168.0.10
		{"64:ff9b::5db8:d70e", true},  // 93.184.215.14
		// NAT64, the local-use prefix (RFC 8215): not public whatever it carries.
		{"64:ff9b:1::a9fe:a9fe", false},
		{"64:ff9b:1:5db8:d7:e00::", false},
		// 6to4 (RFC 3056): the IPv4 address is bits 16 to 47.
		{"2002:a9fe:a9fe::", false},
		{"2002:7f00:1::", false},
		{"2002:a01:203::1", false},
		{"2002:5db8:d70e::1", true},
		// Teredo (RFC 4380): the server is bits 32 to 63, the client the
		// last 32 bits inverted.
		{"2001:0:4136:e378::80ff:fffe", false},         // client 127.0.0.1
		{"2001:0:4136:e378::5601:5601", false},         // client 169.254.169.254
		{"2001:0:a01:203::a247:28f1", false},           // server 10.1.2.3
		{"2001:0:4136:e378:8000:63bf:a247:28f1", true}, // client 93.184.215.14
		// IPv4-compatible (deprecated, RFC 4291).
		{"::7f00:1", false},
		{"::a9fe:a9fe", false},
		{"::5db8:d70e", true},
		// IPv4-mapped.
		{"::ffff:127.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"::ffff:93.184.215.14", true},
		// IPv4-translated (SIIT, RFC 2765).
		{"::ffff:0:7f00:1", false},
		{"::ffff:0:5db8:d70e", true},
		// Plain addresses, for comparison.
		{"2606:4700:4700::1111", true},
		{"93.184.215.14", true},
		{"::1", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			for _, scheme := range []string{"http", "https"} {
				u := scheme + "://[" + tt.host + "]/x"
				if ip := net.ParseIP(tt.host); ip.To4() != nil && tt.host[0] != ':' {
					u = scheme + "://" + tt.host + "/x"
				}
				err := checkURL(context.Background(), net.DefaultResolver, u, false)
				if got := err == nil; got != tt.public {
					t.Errorf("checkURL(%s): %v; want allowed %t", u, err, tt.public)
				}
				if err != nil && hitl.ErrorCode(err) != hitl.EINVALID {
					t.Errorf("checkURL(%s): %v; want %s", u, err, hitl.EINVALID)
				}
				if err := checkURL(context.Background(), net.DefaultResolver, u, true); err != nil {
					t.Errorf("checkURL(%s) with private addresses allowed: %v", u, err)
				}
			}
			err := dialControl("tcp", net.JoinHostPort(tt.host, "443"), nil)
			if got := err == nil; got != tt.public {
				t.Errorf("dialControl(%s): %v; want allowed %t", tt.host, err, tt.public)
			}
			if err != nil && !refusedAddr(err) {
				t.Errorf("dialControl(%s): %v; want the dialer's refusal", tt.host, err)
			}
		})
	}
}
