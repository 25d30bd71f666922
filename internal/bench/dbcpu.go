package bench

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"
)

// postgresCPU returns the CPU time (user and system) the PostgreSQL
// processes on this machine have used: every live process named
// "postgres", plus what the ended ones left in their parent's account
// (backends exit when their connection closes, and the postmaster reaps
// them). ok is false when there is none to read (no /proc, or a database
// on another machine). Differences between two readings are what the
// database used meanwhile, whoever asked.
func postgresCPU() (total time.Duration, ok bool) {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	for _, e := range dir {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			continue // ended meanwhile
		}
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || end < open || string(b[open+1:end]) != "postgres" {
			continue
		}
		// Fields from the last ')': state is field 3; utime, stime,
		// cutime and cstime are fields 14 to 17.
		f := strings.Fields(string(b[end+1:]))
		if len(f) < 15 {
			continue
		}
		var ticks int64
		for _, s := range f[11:15] {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				ticks = -1
				break
			}
			ticks += n
		}
		if ticks < 0 {
			continue
		}
		total += time.Duration(ticks) * clockTick
		ok = true
	}
	return total, ok
}
