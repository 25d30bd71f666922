package server_test

import (
	"context"
	"fmt"
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
// intervals: a client that answers pings stays, one that reads them but
// never answers is dropped once a ping goes unanswered for pongWait.
func TestWebSocketPingsAndDeadPeers(t *testing.T) {
	t.Parallel()
	b := hitltest.StartBroker(t)
	s := server.New(b, nil)
	server.SetWebSocketPing(s, 50*time.Millisecond, time.Second)
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
		_ = c.SetDeadline(time.Now().Add(15 * time.Second))
		return c
	}
	alive, dead := dial(), dial()

	// dead reads its pings and never answers, until the server ends it.
	// The replay (of nothing: hitl:replay_done alone) comes first.
	deadEnded := make(chan error, 1)
	go func() {
		for frames := 0; ; frames++ {
			op, _, err := readFrame(dead)
			if err != nil {
				deadEnded <- nil
				return
			}
			if op != ws.OpPing && (frames > 0 || op != ws.OpText) {
				deadEnded <- fmt.Errorf("dead peer got opcode %v, want the end of the replay, only pings and then the end", op)
				return
			}
		}
	}()
	// alive answers every ping meanwhile.
	pings := 0
	for {
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
		select {
		case err := <-deadEnded:
			if err != nil {
				t.Fatal(err)
			}
			// Only the peer that answered is left.
			if pings < 2 {
				t.Errorf("alive was pinged %d times before dead was dropped, want several", pings)
			}
			if got := s.WebSockets(); got != 1 {
				t.Errorf("open WebSockets %d, want 1 (the one answering pings)", got)
			}
			return
		default:
		}
	}
}
