package sqlite_test

import (
	"bytes"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/sqlite"
)

// TestFileIsPrivate checks that a new database file, and the -wal and
// -shm files beside it, are readable by their owner only: they hold
// questions, answers and credential hashes.
func TestFileIsPrivate(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("Unix file modes")
	}
	path := tempPath(t)
	s := open(t, path, nil)
	in, err := hitl.NewInteraction(hitl.CreateRequest{Question: "Your one-time code?"}, hitl.Caller{Name: "agent"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	in.ID = "01900000-0000-7000-8000-0000000000aa"
	if _, _, _, err := s.CreateInteraction(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("stat: %v", err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s: mode %04o, want 0600", p, got)
		}
	}
}

// TestExistingFileModeKept checks that the mode of a database file that
// exists already is left as its owner set it, with a warning when others
// may read it.
func TestExistingFileModeKept(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("Unix file modes")
	}
	path := tempPath(t)
	if err := os.WriteFile(path, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil { // past the umask
		t.Fatal(err)
	}
	var logs bytes.Buffer
	open(t, path, &sqlite.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o640 {
		t.Errorf("mode %04o, want 0640 as it was", got)
	}
	if !strings.Contains(logs.String(), "may be read by others") || !strings.Contains(logs.String(), "mode=0640") {
		t.Errorf("no warning about the mode in the log:\n%s", logs.String())
	}
}
