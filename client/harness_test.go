package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
)

// mustCreate creates an interaction and fails the test on error.
func mustCreate(t *testing.T, c *client.Client, req hitl.CreateRequest) *hitl.Interaction {
	t.Helper()
	in, created, err := c.Create(context.Background(), req)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if !created {
		t.Fatalf("create: created = false, want true")
	}
	return in
}

// waitResult is what a Wait or Ask in a goroutine returned.
type waitResult struct {
	in  *hitl.Interaction
	err error
}

// receive returns the result sent on ch, failing the test after a bound.
func receive(t *testing.T, ch <-chan waitResult, d time.Duration) waitResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(d):
		t.Fatalf("no result after %s", d)
		return waitResult{}
	}
}
