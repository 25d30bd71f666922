package hitl_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// TestWatchCredentials: a watched context ends, with ErrCredentialsEnded
// as its cause, once the check says the credentials no longer hold, and
// not before.
func TestWatchCredentials(t *testing.T) {
	t.Parallel()
	var valid atomic.Bool
	valid.Store(true)
	checked := make(chan struct{}, 1)
	ctx := hitl.WithCredentialCheck(t.Context(), func(context.Context) bool {
		select {
		case checked <- struct{}{}:
		default:
		}
		return valid.Load()
	}, time.Millisecond)
	if !hitl.CredentialsHold(ctx) {
		t.Fatal("CredentialsHold: false, want true while the check says so")
	}
	wctx, stop := hitl.WatchCredentials(ctx)
	defer stop()
	<-checked
	<-checked // checked at least once since: still valid
	if err := wctx.Err(); err != nil {
		t.Fatalf("while the credentials hold: %v, want the context alive", err)
	}
	valid.Store(false)
	<-wctx.Done()
	if got := context.Cause(wctx); !errors.Is(got, hitl.ErrCredentialsEnded) {
		t.Errorf("cause %v, want ErrCredentialsEnded", got)
	}
	if hitl.CredentialsHold(ctx) {
		t.Error("CredentialsHold: true, want false once the check says so")
	}

	// Once stopped, a watch checks no more.
	var after atomic.Int32
	ctx = hitl.WithCredentialCheck(t.Context(), func(context.Context) bool {
		after.Add(1)
		return true
	}, time.Millisecond)
	_, stop3 := hitl.WatchCredentials(ctx)
	for after.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	stop3()
	n := after.Load()
	time.Sleep(20 * time.Millisecond)
	if got := after.Load(); got > n+1 { // one check may have been under way
		t.Errorf("%d checks after stop; want none", got-n)
	}

	// Without a check, nothing is watched.
	plain, stop2 := hitl.WatchCredentials(t.Context())
	stop2()
	if got := context.Cause(plain); !errors.Is(got, context.Canceled) || !hitl.CredentialsHold(t.Context()) {
		t.Errorf("without a check: cause %v, want context.Canceled after stop", got)
	}
}
