package server_test

import (
	"os"
	"testing"

	"github.com/hitl-sh/hitl/internal/turns"
)

// TestMain gives the tests two turns per CPU (internal/turns): most of
// this package's tests wait rather than compute, on deadlines and on
// replies. Those that hold a stream or a long-poll open for over a minute
// (longlived_test.go) take no turn. Measured on 2 CPUs, when those two held turns too: 123 s of wall
// time with one turn per CPU, 75-82 s with two, the same CPU time.
func TestMain(m *testing.M) {
	turns.Use(2)
	os.Exit(m.Run())
}
