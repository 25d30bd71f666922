package broker_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/sqlite"
)

// versionCounter is a SQLite store that counts the reads of the rules'
// version made outside the transactions that write actions.
type versionCounter struct {
	*sqlite.Store
	reads atomic.Int64
}

func (s *versionCounter) RulesVersion(ctx context.Context) (int64, error) {
	s.reads.Add(1)
	return s.Store.RulesVersion(ctx)
}

// TestRulesOfAnotherProcess: two brokers on one SQLite file, as two
// processes sharing it. The second decides its actions by the rules it
// has cached, without reading the rules' version before each; a rule made
// by the first, and then its revoke, still decide the second's very next
// action, as the version is checked in the transaction that writes it.
func TestRulesOfAnotherProcess(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hitl.db")
	first := openBroker(t, path, nil)
	store, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	counted := &versionCounter{Store: store}
	second := startBroker(t, counted, nil)

	if in := createAs(t, buildBot, second, bash("make test")); in.Status != hitl.StatusPending {
		t.Fatalf("with no rules: %s, want pending", in.Status)
	}
	before := counted.reads.Load()
	for range 10 {
		if in := createAs(t, buildBot, second, bash("make test")); in.Status != hitl.StatusPending {
			t.Fatalf("with no rules: %s, want pending", in.Status)
		}
	}
	if n := counted.reads.Load() - before; n != 0 {
		t.Errorf("10 actions with the rules unchanged read the rules' version %d times, want 0", n)
	}

	r, err := first.CreateRule(root, hitl.RuleRequest{Effect: hitl.RuleAllow, SourceAgent: "*", ActionName: "Bash",
		Match: &hitl.RuleMatch{Arg: "command", Prefix: "make test"}})
	if err != nil {
		t.Fatal(err)
	}
	if in := createAs(t, buildBot, second, bash("make test")); in.Status != hitl.StatusAnswered || in.Result.RuleID != r.ID {
		t.Fatalf("after a rule made by the other process: %s %+v, want answered by rule %s", in.Status, in.Result, r.ID)
	}
	if _, err := first.RevokeRule(root, r.ID); err != nil {
		t.Fatal(err)
	}
	if in := createAs(t, buildBot, second, bash("make test")); in.Status != hitl.StatusPending || in.Result != nil {
		t.Fatalf("after the rule was revoked by the other process: %s %+v, want pending", in.Status, in.Result)
	}
}
