package server

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// TestWriteJSONInteractionAsEncoded: an interaction, written straight from
// its MarshalJSON, is the bytes json.Encoder writes for it.
func TestWriteJSONInteractionAsEncoded(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, in := range []*hitl.Interaction{
		{ID: "a", Type: hitl.TypeApproval, Question: "Ship <v2> & tag it?", Status: hitl.StatusPending, CreatedAt: at, Deadline: at.Add(time.Hour)},
		{ID: "b", Type: hitl.TypeAction, Question: "Run rm?", Action: &hitl.Action{Name: "rm", Args: json.RawMessage(`{"path":"/tmp/x"}`)},
			Status: hitl.StatusAnswered, Result: &hitl.Result{Value: json.RawMessage(`{"decision":"approve"}`)}, CreatedAt: at},
	} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(in); err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		writeJSON(rec, 200, in)
		if got := rec.Body.String(); got != want.String() {
			t.Errorf("writeJSON(%s):\n got %s\nwant %s", in.ID, got, want.String())
		}
	}
}
