package server_test

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestMain runs twice as many parallel tests as there are CPUs, unless
// -parallel is given: most of this package's tests wait rather than
// compute (on deadlines, on replies, and two on a stream held open for
// over a minute), and with one test per CPU those two alone held both
// slots of a 2-CPU machine for their whole minute. Measured on 2 CPUs:
// 123 s of wall time at -parallel=2, 75-82 s at 4, the same CPU time.
func TestMain(m *testing.M) {
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		if err := flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0))); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
