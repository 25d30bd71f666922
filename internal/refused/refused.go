// Package refused gives tests a loopback address that refuses
// connections: what a client sees when the server it was given is down.
package refused

import "testing"

// URL returns the http URL of Addr.
func URL(t testing.TB) string {
	t.Helper()
	return "http://" + Addr(t)
}
