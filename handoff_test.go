package hitl_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

func TestHandoffAnswers(t *testing.T) {
	t.Parallel()
	in, err := hitl.NewInteraction(hitl.HandoffRequest{Message: "Over to you", SessionID: "s"}.CreateRequest(), hitl.Caller{Name: "bot"}, time.Now())
	if err != nil {
		t.Fatalf("NewInteraction: %v", err)
	}
	if in.Type != hitl.TypeHandoff || len(in.Options) != 0 || in.ClaimMode != hitl.ClaimExclusive {
		t.Fatalf("type %s options %v claim %q; want a handoff without options, claimed exclusively", in.Type, in.Options, in.ClaimMode)
	}
	for _, tc := range []struct {
		raw, want string // want "" means refused
	}{
		{`"Hello"`, `"Hello"`},
		{`"  spaced  "`, `"  spaced  "`},
		{`""`, ""},
		{`"   "`, ""},
		{`42`, ""},
		{`true`, ""},
		{`["a"]`, ""},
		{`null`, ""},
		{`"` + strings.Repeat("x", hitl.MaxFreeTextLen+1) + `"`, ""},
	} {
		got, err := hitl.NormalizeAnswer(in, json.RawMessage(tc.raw))
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("NormalizeAnswer(%.20s) = %s; want refused", tc.raw, got)
		case tc.want == "" && hitl.ErrorCode(err) != hitl.EVALUE:
			t.Errorf("NormalizeAnswer(%.20s): %v; want code %s", tc.raw, err, hitl.EVALUE)
		case tc.want != "" && (err != nil || string(got) != tc.want):
			t.Errorf("NormalizeAnswer(%s) = %s, %v; want %s", tc.raw, got, err, tc.want)
		}
	}
}

func TestHandoffReply(t *testing.T) {
	t.Parallel()
	h := &hitl.Interaction{ID: "h", Type: hitl.TypeHandoff}
	for _, tc := range []struct {
		status hitl.Status
		result *hitl.Result
		reply  string
		code   string
	}{
		{hitl.StatusAnswered, &hitl.Result{Value: json.RawMessage(`"On it"`)}, "On it", ""},
		{hitl.StatusPending, nil, "", hitl.ECONFLICT},
		{hitl.StatusExpired, nil, "", hitl.EEXPIRED},
		{hitl.StatusCancelled, &hitl.Result{Reason: "left"}, "", hitl.ECANCELLED},
	} {
		h.Status, h.Result = tc.status, tc.result
		got, err := hitl.HandoffReply(h)
		if got != tc.reply || hitl.ErrorCode(err) != tc.code {
			t.Errorf("%s: %q, %v; want %q, code %q", tc.status, got, err, tc.reply, tc.code)
		}
	}
	if _, err := hitl.HandoffReply(&hitl.Interaction{Type: hitl.TypeFreeText, Status: hitl.StatusAnswered}); hitl.ErrorCode(err) != hitl.EINVALID {
		t.Errorf("a free_text question: %v; want invalid", err)
	}
}
