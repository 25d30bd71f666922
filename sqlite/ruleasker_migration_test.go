package sqlite_test

import (
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// TestRuleAskerMigration takes a database back to before rules were bound
// to the caller that asked, with a rule made by "always" and one made
// through the rules API, and migrates it again: the first is bound to the
// caller that asked its question, the second stays for every caller.
func TestRuleAskerMigration(t *testing.T) {
	path := tempPath(t)
	s := open(t, path, nil)
	in, _, _, err := s.CreateInteraction(t.Context(), newInteraction(t))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	always, _, err := s.CreateRule(t.Context(), &hitl.Rule{Effect: hitl.RuleAllow, SourceAgent: "a", ActionName: "Bash",
		CreatedBy: "alice", InteractionID: in.ID, AskedBy: "ignored"}, hitl.ChannelWeb)
	if err != nil {
		t.Fatal(err)
	}
	api, _, err := s.CreateRule(t.Context(), &hitl.Rule{Effect: hitl.RuleDeny, SourceAgent: "a", ActionName: "Bash", CreatedBy: "root"}, hitl.ChannelAPI)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	db := inspect(t, path)
	if _, err := db.Exec(`
		DELETE FROM schema_migrations WHERE name = '0012_rule_asker.sql';
		ALTER TABLE rules DROP COLUMN asked_by;`); err != nil {
		t.Fatalf("go back to before asked_by: %v", err)
	}
	db.Close()

	s = open(t, path, nil)
	rules, err := s.ActiveRules(t.Context(), "a", "Bash", "", now)
	if err != nil || len(rules) != 2 {
		t.Fatalf("ActiveRules: %v, %v", rules, err)
	}
	got := map[string]string{}
	for _, r := range rules {
		got[r.ID] = r.AskedBy
	}
	if got[always.ID] != in.CreatedBy || in.CreatedBy == "" {
		t.Errorf("always rule asked_by = %q, want the question's created_by %q", got[always.ID], in.CreatedBy)
	}
	if got[api.ID] != "" {
		t.Errorf("rules API rule asked_by = %q, want empty (every caller)", got[api.ID])
	}
}
