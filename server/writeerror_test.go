package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestWriteErrorClientGone: an error that is the request's own
// cancellation (the client hung up) is not logged as an internal error;
// any other internal error is, also the expiry of a deadline of the
// server's own.
func TestWriteErrorClientGone(t *testing.T) {
	gone, hangUp := context.WithCancel(context.Background())
	hangUp()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		err    error
		logged bool
	}{
		{"the client hung up", gone, fmt.Errorf("list: %w", context.Canceled), false},
		{"cancelled while the client waits", context.Background(), context.Canceled, true},
		{"the server's own deadline", gone, context.DeadlineExceeded, true},
		{"a failure after the client hung up", gone, errors.New("disk full"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs strings.Builder
			s := &Server{log: slog.New(slog.NewTextHandler(&logs, nil))}
			r := httptest.NewRequestWithContext(tc.ctx, "GET", "/api/v1/interactions", nil)
			rec := httptest.NewRecorder()
			s.writeError(rec, r, tc.err)
			if rec.Code != 500 {
				t.Errorf("status %d, want 500", rec.Code)
			}
			if got := strings.Contains(logs.String(), "level=ERROR"); got != tc.logged {
				t.Errorf("logged as an error: %v, want %v:\n%s", got, tc.logged, logs.String())
			}
		})
	}
}
