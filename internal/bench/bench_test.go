package bench

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	d := summarize(s)
	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{
		{"p50", d.P50, 50 * time.Millisecond},
		{"p95", d.P95, 95 * time.Millisecond},
		{"p99", d.P99, 99 * time.Millisecond},
		{"max", d.Max, 100 * time.Millisecond},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
	if got := summarize([]time.Duration{7}).P99; got != 7 {
		t.Errorf("p99 of one sample = %s, want 7ns", got)
	}
	if got := median([]float64{3, 1, 2, 10}); got != 2.5 {
		t.Errorf("median = %v, want 2.5", got)
	}
}

func TestReadResponse(t *testing.T) {
	tests := []struct {
		name      string
		raw       string
		status    int
		body      string
		reuse     bool
		wantError bool
	}{
		{"content length", "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}", 201, `{"a":1}`, true, false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n", 200, "abcde", true, false},
		{"connection close", "HTTP/1.1 409 Conflict\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno", 409, "no", false, false},
		{"no length", "HTTP/1.1 200 OK\r\n\r\nuntil eof", 200, "until eof", false, false},
		{"garbage", "SSH-2.0-OpenSSH\r\n\r\n", 0, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, reuse, err := readResponse(bufio.NewReader(strings.NewReader(tt.raw)))
			if (err != nil) != tt.wantError {
				t.Fatalf("error %v, want error %v", err, tt.wantError)
			}
			if tt.wantError {
				return
			}
			if status != tt.status || string(body) != tt.body || reuse != tt.reuse {
				t.Errorf("got %d %q reuse %v, want %d %q reuse %v", status, body, reuse, tt.status, tt.body, tt.reuse)
			}
		})
	}
}

// frame encodes an unmasked server frame.
func frame(fin bool, op byte, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	b := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		b = append(b, byte(n))
	case n < 1<<16:
		b = append(b, 126, byte(n>>8), byte(n))
	default:
		b = append(b, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, payload...)
}

func TestWSConnReadsMessages(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	w := &wsConn{c: client, br: bufio.NewReader(client)}
	long := strings.Repeat("x", 70000)
	go func() {
		defer server.Close()
		_, _ = server.Write(frame(true, opText, []byte(`{"type":"hitl:question"}`)))
		_, _ = server.Write(frame(false, opText, []byte("hel")))
		_, _ = server.Write(frame(true, opPing, []byte("p")))
		// The client answers the ping with a masked pong before the
		// message goes on.
		pong := make([]byte, 2+4+1)
		if _, err := io.ReadFull(server, pong); err != nil || pong[0] != 0x80|opPong || pong[1] != 0x80|1 || pong[6]^pong[2] != 'p' {
			t.Errorf("pong %x, %v", pong, err)
		}
		_, _ = server.Write(frame(true, opContinuation, []byte("lo")))
		_, _ = server.Write(frame(true, opText, []byte(long)))
		_, _ = server.Write(frame(true, opClose, append([]byte{0x03, 0xf5}, "too slow"...)))
		_, _ = io.Copy(io.Discard, server)
	}()
	for _, want := range []string{`{"type":"hitl:question"}`, "hello", long} {
		got, err := w.next()
		if err != nil || string(got) != want {
			t.Fatalf("next = %.40q, %v; want %.40q", got, err, want)
		}
	}
	_, err := w.next()
	var closed *errClosed
	if !errors.As(err, &closed) || closed.code != 1013 || closed.reason != "too slow" || !errors.Is(err, io.EOF) {
		t.Errorf("after the close frame: %v, want 1013 too slow (io.EOF)", err)
	}
}

func TestCheckLoopback(t *testing.T) {
	for url, ok := range map[string]bool{
		"http://127.0.0.1:7878":   true,
		"http://localhost:7878/x": true,
		"http://[::1]:7878":       true,
		"http://127.0.0.9:1":      true,
		"http://192.0.2.1:7878":   false,
		"http://example.com":      false,
		"https://127.0.0.1:7878":  false,
		"://bad":                  false,
	} {
		if err := CheckLoopback(url); (err == nil) != ok {
			t.Errorf("CheckLoopback(%q) = %v, want ok %v", url, err, ok)
		}
	}
}

func TestTrialOf(t *testing.T) {
	for in, want := range map[string]int{"7: deploy": 7, "12:": 12, ": x": -1, "1234567:": -1, "": -1} {
		if got := trialOf([]byte(in)); got != want {
			t.Errorf("trialOf(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestCurveSizes(t *testing.T) {
	for n, want := range map[int][]int{
		200:       {200},
		10_000:    {10_000},
		20_000:    {10_000, 20_000},
		100_000:   {10_000, 100_000},
		1_000_000: {10_000, 100_000, 1_000_000},
	} {
		if got := curveSizes(n); !slices.Equal(got, want) {
			t.Errorf("curveSizes(%d) = %v, want %v", n, got, want)
		}
	}
}
