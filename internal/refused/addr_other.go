//go:build !unix

package refused

import (
	"net"
	"testing"
)

// Addr returns a loopback address nothing listens on: a port found free
// and closed again (on Unix the port is held for the test's lifetime).
func Addr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
