package hitltest

import (
	"net"
	"testing"
)

// FreeAddr returns a loopback address ("127.0.0.1:port") whose port was
// free a moment ago: for a server that must know its own URL before it
// listens (a sign-in provider's redirect, say).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
