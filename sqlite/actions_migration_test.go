package sqlite_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// actionsMigration is the migration that adds actions and rules.
const actionsMigration = "0008_actions.sql"

// TestActionsMigration takes a database back to before actions (no action
// columns, no rules, events.interaction_id NOT NULL) and migrates it
// again: interactions and the event log are kept, numbers and all, and a
// rule's event, of no interaction, can then be appended.
func TestActionsMigration(t *testing.T) {
	path := tempPath(t)
	s := open(t, path, nil)
	var ids []string
	for range 2 {
		in, _, _, err := s.CreateInteraction(t.Context(), newInteraction(t))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, in.ID)
	}
	if _, _, err := s.Resolve(t.Context(), ids[0], hitl.Transition{Status: hitl.StatusAnswered, Value: []byte(`"yes"`), By: "bob", Via: hitl.ChannelWeb}); err != nil {
		t.Fatal(err)
	}
	want, err := s.Events(t.Context(), 0, 100)
	if err != nil || len(want) != 3 {
		t.Fatalf("events: %d, %v; want 3", len(want), err)
	}
	s.Close()

	db := inspect(t, path)
	if _, err := db.Exec(`
		DELETE FROM schema_migrations WHERE name IN ('` + actionsMigration + `', '0012_rule_asker.sql', '0023_rule_within.sql', '0024_rule_kind.sql'); -- these alter rules
		DROP TABLE rules;
		ALTER TABLE interactions DROP COLUMN action;
		ALTER TABLE interactions DROP COLUMN args_diff;
		ALTER TABLE interactions DROP COLUMN rule_id;
		CREATE TABLE events_old (
			seq            INTEGER PRIMARY KEY,
			type           TEXT    NOT NULL,
			interaction_id TEXT    NOT NULL REFERENCES interactions (id),
			at             INTEGER NOT NULL,
			actor          TEXT    NOT NULL DEFAULT '',
			channel        TEXT    NOT NULL DEFAULT '',
			detail         TEXT    NOT NULL DEFAULT ''
		) STRICT;
		INSERT INTO events_old SELECT * FROM events;
		DROP TABLE events;
		ALTER TABLE events_old RENAME TO events;
		CREATE INDEX events_interaction ON events (interaction_id);`); err != nil {
		t.Fatalf("go back to before actions: %v", err)
	}
	db.Close()

	s = open(t, path, nil)
	got, err := s.Events(t.Context(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events after the migration (-want +got):\n%s", d)
	}
	r, ev, err := s.CreateRule(t.Context(), &hitl.Rule{Effect: hitl.RuleAllow, SourceAgent: "a", ActionName: "Bash", CreatedBy: "root"}, hitl.ChannelAPI)
	if err != nil {
		t.Fatalf("CreateRule after the migration: %v", err)
	}
	if ev.Seq != 4 || ev.InteractionID != "" {
		t.Errorf("rule_created event: seq %d, interaction %q; want 4 and none", ev.Seq, ev.InteractionID)
	}
	if rules, err := s.ActiveRules(t.Context(), "a", "Bash", "", r.CreatedAt); err != nil || len(rules) != 1 {
		t.Errorf("ActiveRules: %v, %v", rules, err)
	}
	var n int
	if err := inspect(t, path).QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'events_interaction'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("events_interaction after the migration: %d, %v; want it kept", n, err)
	}
}
