package stack

import (
	"testing"
	"unsafe"
)

// TestGrow: after Grow, a fresh goroutine calls as deep as room allows
// without its stack moving (the runtime copies a stack to grow it, so a
// local's address, kept as a number it does not adjust, changes); without
// Grow, the same calls move it.
func TestGrow(t *testing.T) {
	for _, grow := range []bool{true, false} {
		moved := make(chan bool)
		go func() {
			if grow {
				Grow()
			}
			var local byte
			at := uintptr(unsafe.Pointer(&local))
			deep(room / 256 * 3 / 4)
			moved <- uintptr(unsafe.Pointer(&local)) != at
		}()
		if got := <-moved; got == grow {
			t.Errorf("with Grow %v: the stack moved %v, want %v", grow, got, !grow)
		}
	}
}

// deep calls itself n times, with a frame of about 256 bytes each.
//
//go:noinline
func deep(n int) byte {
	var b [200]byte
	if n == 0 {
		return use(b[:])
	}
	return deep(n-1) + use(b[:])
}
