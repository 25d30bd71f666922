package hitltest_test

import (
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/hitltest"
)

// TestCheckStreamMessage checks made-up stream messages against the
// document.
func TestCheckStreamMessage(t *testing.T) {
	t.Parallel()
	const id = "01968f5e-7a3b-7cde-8f01-23456789abcd"
	question := `{"type":"hitl:question","interaction_id":"` + id + `","interaction_type":"approval","question":"Ship?",` +
		`"context":null,"options":[{"key":"approve","label":"Approve","description":null},{"key":"reject","label":"Reject","description":"no"}],` +
		`"form_schema":null,"default_response":null,"timeout":60,"source_agent":"","deadline":"2026-05-05T12:34:56.000Z","created_at":"2026-05-05T12:33:56.000Z"`
	for _, tt := range []struct {
		name, msg string
		want      string // in the error; "" for none
	}{
		{"replayed question", question + `}`, ""},
		{"live question", question + `,"session_id":"s1","seq":7}`, ""},
		{"cancel", `{"type":"hitl:cancel","interaction_id":"` + id + `","reason":"answered","seq":8}`, ""},
		{"resolved", `{"type":"hitl:resolved","interaction_id":"` + id + `","status":"answered","responded_by":"alice","channel":"web","seq":8}`, ""},
		{"replay done", `{"type":"hitl:replay_done","seq":8,"resumed":false,"pending":["` + id + `"]}`, ""},
		{"field the document does not name", question + `,"priority":1}`, `field "priority"`},
		{"field missing", `{"type":"hitl:cancel","interaction_id":"` + id + `","reason":"timeout"}`, "does not fit"},
		{"wrong type of field", `{"type":"hitl:replay_done","seq":"8","resumed":false}`, "does not fit"},
		{"not a UUID", `{"type":"hitl:cancel","interaction_id":"nope","reason":"timeout","seq":1}`, "does not fit"},
		{"unknown type", `{"type":"hitl:ping"}`, "no such type"},
		{"not JSON", `hitl:cancel`, "stream message"},
	} {
		err := hitltest.CheckStreamMessage([]byte(tt.msg))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want nil", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}
