//go:build unix

package refused_test

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/internal/refused"
)

// TestAddrRefusesAndStaysTaken: a connection to the address is refused
// at once, and a listener cannot take its port while the test runs.
func TestAddrRefusesAndStaysTaken(t *testing.T) {
	addr := refused.Addr(t)
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("dial %s: connected; want refused", addr)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s: %v; want connection refused", addr, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusal took %v; want it at once", d)
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Errorf("a listener took %s while it was held", addr)
	}
}
