package wshub

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/gobwas/ws"
)

// TestFramesReadBack: the frames the hub makes are read back by the ws
// package as one final, unmasked text frame with the payload, at each
// length encoding's edges, and Payload returns the payload.
func TestFramesReadBack(t *testing.T) {
	for _, n := range []int{0, 1, 125, 126, 0xffff, 0x10000} {
		data := []byte(strings.Repeat("x", n))
		frame := appendFrame([]byte("before"), data)[len("before"):]
		r := bytes.NewReader(frame)
		h, err := ws.ReadHeader(r)
		if err != nil {
			t.Fatalf("%d bytes: read the header: %v", n, err)
		}
		payload, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if !h.Fin || h.OpCode != ws.OpText || h.Masked || h.Length != int64(n) || !bytes.Equal(payload, data) {
			t.Errorf("%d bytes: got header %+v and %d bytes", n, h, len(payload))
		}
		if got := Payload(frame); !bytes.Equal(got, data) {
			t.Errorf("%d bytes: Payload returned %d bytes", n, len(got))
		}
	}
}

// TestConsume: what a partial write took is removed from the buffers,
// across buffer boundaries.
func TestConsume(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "abc|de|f"}, {2, "c|de|f"}, {3, "de|f"}, {4, "e|f"}, {6, ""},
	} {
		bufs := net.Buffers{[]byte("abc"), []byte("de"), []byte("f")}
		consume(&bufs, tc.n)
		var parts []string
		for _, b := range bufs {
			parts = append(parts, string(b))
		}
		if got := strings.Join(parts, "|"); got != tc.want {
			t.Errorf("consume %d: got %q, want %q", tc.n, got, tc.want)
		}
	}
}
