package hitltest

import (
	"context"
	"testing"
	"time"
)

// Bound is how long a test waits for something that should happen at
// once: generous, so a busy machine never fails a test, and still an end,
// so a test never hangs.
const Bound = 15 * time.Second

// Context returns a context that ends with the test, or after Bound.
func Context(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), Bound)
	t.Cleanup(cancel)
	return ctx
}

// Await waits until ch is closed or receives, failing the test after
// Bound.
func Await[T any](t testing.TB, what string, ch <-chan T) {
	t.Helper()
	timer := time.NewTimer(Bound)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
	}
}
