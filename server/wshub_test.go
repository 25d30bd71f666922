package server_test

import (
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/server"
)

// TestWebSocketPingsAndDeadPeers runs the hub's sweep with short
// intervals: a client that answers pings stays, one that stops reading is
// dropped once a ping goes unanswered.
func TestWebSocketPingsAndDeadPeers(t *testing.T) {
	t.Parallel()
	b := hitltest.StartBroker(t)
	s := server.New(b, nil)
	server.SetWebSocketPing(s, 20*time.Millisecond, 100*time.Millisecond)
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	dial := func() net.Conn {
		c, _, _, err := ws.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/ws")
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	alive, dead := dial(), dial()

	// alive answers every ping for a while; dead reads nothing.
	pings := 0
	_ = alive.SetDeadline(time.Now().Add(10 * time.Second))
	for pings < 15 {
		op, payload, err := readFrame(alive)
		if err != nil {
			t.Fatalf("alive: read after %d pings: %v", pings, err)
		}
		if op == ws.OpPing {
			pings++
			if err := ws.WriteFrame(alive, ws.MaskFrameInPlace(ws.NewPongFrame(payload))); err != nil {
				t.Fatalf("pong: %v", err)
			}
		}
	}
	// By now dead missed a ping by far more than pongWait: the server
	// closed it without a handshake, and only alive is left.
	if got := s.WebSockets(); got != 1 {
		t.Errorf("open WebSockets %d, want 1 (the one answering pings)", got)
	}
	_ = dead.SetDeadline(time.Now().Add(10 * time.Second))
	for {
		op, _, err := readFrame(dead)
		if err != nil {
			break // closed by the server
		}
		if op != ws.OpPing {
			t.Fatalf("dead peer got %v, want only pings and then the end", op)
		}
	}
}
