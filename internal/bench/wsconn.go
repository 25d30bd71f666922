package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// wsConn is a minimal WebSocket client (RFC 6455) for the benchmark: it
// reads server messages and answers pings, nothing more. The load
// generator holds thousands of these, so it keeps one small read buffer
// and no goroutine of its own; the caller reads in its goroutine.
type wsConn struct {
	c   net.Conn
	br  *bufio.Reader
	buf []byte // the message being read

	wmu sync.Mutex // serialises control frames
}

// WebSocket opcodes.
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// dialWS opens a WebSocket to base's /ws from the local address laddr
// (nil: any).
func dialWS(ctx context.Context, srv *Server, laddr net.Addr) (*wsConn, error) {
	return dialWSPath(ctx, srv, "/ws", laddr)
}

// dialWSPath opens a WebSocket to path (with its query) on the server.
func dialWSPath(ctx context.Context, srv *Server, path string, laddr net.Addr) (*wsConn, error) {
	u, err := url.Parse(srv.URL)
	if err != nil {
		return nil, err
	}
	c, err := dialTCP(ctx, u.Host, laddr)
	if err != nil {
		return nil, err
	}
	var key [16]byte
	_, _ = rand.Read(key[:])
	req := "GET " + strings.TrimSuffix(u.Path, "/") + path + " HTTP/1.1\r\n" +
		"Host: " + u.Host + "\r\n" +
		"Upgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(key[:]) + "\r\n" +
		"Sec-WebSocket-Version: 13\r\n" +
		srv.authHeader() + "\r\n"
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}
	br := bufio.NewReaderSize(c, 1024)
	status, err := br.ReadString('\n')
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}
	if !strings.Contains(status, " 101 ") {
		c.Close()
		return nil, fmt.Errorf("websocket handshake: %s", strings.TrimSpace(status))
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("websocket handshake: %w", err)
		}
		if line == "\r\n" {
			break
		}
	}
	_ = c.SetDeadline(time.Time{})
	return &wsConn{c: c, br: br}, nil
}

// dialTCP connects to addr from laddr (nil: any).
func dialTCP(ctx context.Context, addr string, laddr net.Addr) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: laddr}
	return d.DialContext(ctx, "tcp", addr)
}

// next returns the payload of the next data message. The slice is valid
// until the next call. A close from the server is io.EOF.
func (w *wsConn) next() ([]byte, error) {
	w.buf = w.buf[:0]
	for {
		fin, op, n, mask, err := w.header()
		if err != nil {
			return nil, err
		}
		if op >= opClose {
			if n > 125 {
				return nil, errors.New("websocket: control frame too large")
			}
			var ctl [125]byte
			payload := ctl[:n]
			if _, err := io.ReadFull(w.br, payload); err != nil {
				return nil, err
			}
			unmask(payload, mask)
			switch op {
			case opPing:
				if err := w.writeFrame(opPong, payload); err != nil {
					return nil, err
				}
			case opClose:
				_ = w.writeFrame(opClose, nil)
				return nil, closeError(payload)
			}
			continue
		}
		if op != opText && op != opBinary && op != opContinuation {
			return nil, fmt.Errorf("websocket: unexpected opcode %d", op)
		}
		start := len(w.buf)
		w.buf = slices.Grow(w.buf, int(n))[:start+int(n)]
		if _, err := io.ReadFull(w.br, w.buf[start:]); err != nil {
			return nil, err
		}
		unmask(w.buf[start:], mask)
		if fin {
			return w.buf, nil
		}
	}
}

// errClosed is a close frame from the server: io.EOF, with its status.
type errClosed struct {
	code   int
	reason string
}

func (e *errClosed) Error() string {
	return fmt.Sprintf("websocket closed by the server: %d %s", e.code, e.reason)
}

func (e *errClosed) Unwrap() error { return io.EOF }

// closeError describes a close frame's payload (status code and reason).
func closeError(payload []byte) error {
	if len(payload) < 2 {
		return &errClosed{code: 1005}
	}
	return &errClosed{code: int(binary.BigEndian.Uint16(payload)), reason: string(payload[2:])}
}

// header reads a frame header: whether it ends a message, its opcode,
// payload length and mask (nil when unmasked, as from a server).
func (w *wsConn) header() (fin bool, op byte, n uint64, mask []byte, err error) {
	var h [2]byte
	if _, err = io.ReadFull(w.br, h[:]); err != nil {
		return
	}
	fin, op = h[0]&0x80 != 0, h[0]&0x0f
	n = uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err = io.ReadFull(w.br, b[:]); err != nil {
			return
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err = io.ReadFull(w.br, b[:]); err != nil {
			return
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > maxMessage {
		err = errors.New("websocket: frame too large")
		return
	}
	if h[1]&0x80 != 0 {
		mask = make([]byte, 4)
		_, err = io.ReadFull(w.br, mask)
	}
	return
}

// maxMessage bounds one frame the benchmark accepts.
const maxMessage = 16 << 20

// unmask applies a frame's mask (none when mask is nil).
func unmask(b, mask []byte) {
	if mask == nil {
		return
	}
	for i := range b {
		b[i] ^= mask[i%4]
	}
}

// writeFrame sends one masked frame, as a client must.
func (w *wsConn) writeFrame(op byte, payload []byte) error {
	if len(payload) > 125 {
		return errors.New("websocket: control frame too large")
	}
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	b := make([]byte, 0, 6+len(payload))
	b = append(b, 0x80|op, 0x80|byte(len(payload)))
	b = append(b, mask[:]...)
	for i, c := range payload {
		b = append(b, c^mask[i%4])
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	_ = w.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := w.c.Write(b)
	return err
}

// Close closes the connection without a closing handshake.
func (w *wsConn) Close() error { return w.c.Close() }

// wsMessage is the part of a hitl stream message the benchmark reads.
type wsMessage struct {
	Type          string `json:"type"`
	InteractionID string `json:"interaction_id"`
	SourceAgent   string `json:"source_agent"`
	Question      string `json:"question"`
}

// isQuestion reports whether payload is a hitl:question, cheaply.
func isQuestion(payload []byte) bool {
	return bytes.Contains(payload, []byte(`"type":"hitl:question"`))
}
