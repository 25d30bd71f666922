// Package stack grows a goroutine's stack ahead of deep work.
package stack

// room is how much stack Grow makes room for beyond what is in use: the
// depth a request reaches through the middleware, the engine and
// encoding/json, with a margin.
const room = 12 << 10

// Grow makes the calling goroutine's stack hold at least room bytes more
// than it uses now, in one step. A goroutine starts with a small stack,
// which the runtime doubles each time a call needs more, copying it and
// adjusting every frame on it. A request served on a fresh goroutine
// (each one after a parked long-poll is) used to grow it two or three
// times as it went deeper, decoding a number or encoding the
// interaction, at a depth where each copy walked many frames: 6 % of
// the server's CPU at 16 agents. Called where the stack is still
// shallow, Grow costs one short copy and zeroing room bytes; on a
// goroutine whose stack is already as large, only the zeroing.
//
//go:noinline
func Grow() byte {
	var frame [room]byte
	return use(frame[:])
}

// use keeps Grow's frame from being optimised away.
//
//go:noinline
func use(b []byte) byte { return b[len(b)-1] }
