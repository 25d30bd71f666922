package main

import (
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/refused"
	"github.com/hitl-sh/hitl/internal/turns"
)

func TestReadyURL(t *testing.T) {
	turns.Parallel(t)
	tests := []struct{ addr, want string }{
		{"127.0.0.1:7878", "http://127.0.0.1:7878/readyz"},
		{"0.0.0.0:7878", "http://127.0.0.1:7878/readyz"},
		{":7878", "http://127.0.0.1:7878/readyz"},
		{"[::]:7878", "http://[::1]:7878/readyz"},
		{"hitl.internal:80", "http://hitl.internal:80/readyz"},
	}
	for _, tt := range tests {
		if got, err := readyURL(tt.addr); err != nil || got != tt.want {
			t.Errorf("readyURL(%q) = %q, %v; want %q", tt.addr, got, err, tt.want)
		}
	}
	if _, err := readyURL("7878"); err == nil {
		t.Error("readyURL(\"7878\"): no error")
	}
}

func TestHealthCommand(t *testing.T) {
	turns.Parallel(t)
	srv := startServer(t)
	addr := strings.TrimPrefix(srv.URL, "http://")
	if stdout, stderr, code := runHitl("health", "--addr", addr); code != 0 || !strings.Contains(stdout, "ready") {
		t.Errorf("health of a running server: exit %d, stdout %q, stderr %q; want 0 and ready", code, stdout, stderr)
	}
	if _, stderr, code := runHitl("health", "--addr", refused.Addr(t), "--timeout", "2s"); code != 1 || !strings.Contains(stderr, "/readyz") {
		t.Errorf("health of nothing: exit %d, stderr %q; want 1 naming /readyz", code, stderr)
	}
	if _, _, code := runHitl("health", "--addr", "nonsense"); code != 2 {
		t.Errorf("health --addr nonsense: exit %d, want 2", code)
	}
}
