package hitl

import (
	"context"
	"sync"
	"time"
)

// CredentialCheck reports whether the credentials a request was
// authenticated with still hold: false once its token is revoked, its
// session has ended or its user was removed; true when that cannot be
// told (the database is not answering).
type CredentialCheck func(ctx context.Context) bool

// credentialCheck is a CredentialCheck and how often to call it.
type credentialCheck struct {
	check CredentialCheck
	every time.Duration
}

type credentialCheckKey struct{}

// ErrCredentialsEnded is the cause of a context WatchCredentials ended:
// the caller's credentials no longer hold (code EUNAUTHORIZED).
var ErrCredentialsEnded = Errorf(EUNAUTHORIZED, "the credentials this request was made with no longer hold: the token was revoked, the session ended or the user was removed")

// WithCredentialCheck returns a context carrying check, which code that
// waits on the caller's behalf (a long-poll, a tool call waiting for a
// person) calls every interval while it waits (see WatchCredentials). A
// server sets it on the requests it authenticates.
func WithCredentialCheck(ctx context.Context, check CredentialCheck, every time.Duration) context.Context {
	return context.WithValue(ctx, credentialCheckKey{}, credentialCheck{check, every})
}

// CredentialsHold reports whether the caller's credentials in ctx still
// hold, by the check ctx carries (WithCredentialCheck); true without one.
func CredentialsHold(ctx context.Context) bool {
	c, ok := ctx.Value(credentialCheckKey{}).(credentialCheck)
	return !ok || c.check(ctx)
}

// WatchCredentials returns a copy of ctx that ends, with cause
// ErrCredentialsEnded (context.Cause), once the check ctx carries
// (WithCredentialCheck) reports that the caller's credentials no longer
// hold: it checks at the check's interval while the copy lives. Without a
// check it is a plain copy. Call stop when done waiting.
func WatchCredentials(ctx context.Context) (watched context.Context, stop context.CancelFunc) {
	c, ok := ctx.Value(credentialCheckKey{}).(credentialCheck)
	if !ok || c.every <= 0 {
		return context.WithCancel(ctx)
	}
	wctx, cancel := context.WithCancelCause(ctx)
	w := &credentialWatch{}
	// A timer, not a goroutine: most waits end long before the first
	// check (a rule decides the call as it is asked), and a timer that
	// never fires costs no goroutine to start and stop.
	w.mu.Lock()
	w.timer = time.AfterFunc(c.every, func() {
		if wctx.Err() != nil {
			return
		}
		if !c.check(wctx) {
			cancel(ErrCredentialsEnded)
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.stopped {
			w.timer.Reset(c.every)
		}
	})
	w.mu.Unlock()
	return wctx, func() {
		w.mu.Lock()
		w.stopped = true
		w.timer.Stop()
		w.mu.Unlock()
		cancel(context.Canceled)
	}
}

// credentialWatch is the timer of a WatchCredentials, re-armed after each
// check that holds until the watch is stopped.
type credentialWatch struct {
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}
