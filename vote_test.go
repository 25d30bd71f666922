package hitl

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// counted builds an interaction of type typ decided by c, with the votes
// given as who=value pairs, and counts them among electorate.
func counted(t *testing.T, typ Type, c Consensus, electorate []string, votes ...string) (*Interaction, *Transition) {
	t.Helper()
	req := CreateRequest{Type: typ, Question: "Q?", Consensus: &c}
	if typ == TypeSingleChoice || typ == TypeMultiChoice {
		req.Options = OptionList{{Key: "a"}, {Key: "b"}, {Key: "c"}}
	}
	in, err := NewInteraction(req, Caller{Name: "bot"}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range votes {
		who, value, _ := strings.Cut(v, "=")
		in.Votes = append(in.Votes, Vote{By: who, Value: json.RawMessage(value), Channel: ChannelWeb})
	}
	return in, in.Tally(electorate, time.Unix(1, 0))
}

func TestTally(t *testing.T) {
	abc := []string{"a1", "a2", "a3"}
	tests := []struct {
		name       string
		typ        Type
		c          Consensus
		electorate []string
		votes      []string
		status     Status // "" while undecided
		value      string
		reason     string
		needed     int
	}{
		{"all waits", TypeApproval, Consensus{Mode: ModeAll}, abc, []string{"a1=true"}, "", "", "", 3},
		{"all approves", TypeApproval, Consensus{Mode: ModeAll}, abc, []string{"a1=true", "a2=true", "a3=true"}, StatusAnswered, "true", "", 3},
		{"all rejected by one", TypeApproval, Consensus{Mode: ModeAll}, abc, []string{"a1=true", "a2=false"}, StatusAnswered, "false", "rejected by a2", 3},
		{"majority approves", TypeApproval, Consensus{Mode: ModeMajority}, abc, []string{"a1=true", "a3=true"}, StatusAnswered, "true", "", 2},
		{"majority tie is a reject", TypeApproval, Consensus{Mode: ModeMajority}, []string{"a1", "a2"}, []string{"a1=true", "a2=false"}, StatusAnswered, "false", "cannot be reached", 2},
		{"quorum waits after a reject", TypeApproval, Consensus{Mode: ModeQuorum, Required: 2}, abc, []string{"a1=false"}, "", "", "", 2},
		{"quorum out of reach", TypeApproval, Consensus{Mode: ModeQuorum, Required: 2}, abc, []string{"a1=false", "a2=false"}, StatusAnswered, "false", "cannot be reached", 2},
		{"quorum larger than the electorate", TypeApproval, Consensus{Mode: ModeQuorum, Required: 4}, abc, nil, StatusAnswered, "false", "only 3 people may answer", 4},
		{"veto", TypeApproval, Consensus{Mode: ModeQuorum, Required: 1, Veto: true}, abc, []string{"a2=false"}, StatusAnswered, "false", "vetoed by a2", 1},
		{"nobody may vote", TypeApproval, Consensus{Mode: ModeAll}, nil, nil, StatusAnswered, "false", "only 0 people", 0},
		{"a voter outside the electorate counts", TypeApproval, Consensus{Mode: ModeQuorum, Required: 2}, []string{"a1"}, []string{"admin=true", "a1=true"}, StatusAnswered, "true", "", 2},
		{"choice quorum per option", TypeSingleChoice, Consensus{Mode: ModeQuorum, Required: 2}, abc, []string{`a1="a"`, `a2="b"`, `a3="a"`}, StatusAnswered, `"a"`, "", 2},
		{"choice out of reach", TypeSingleChoice, Consensus{Mode: ModeQuorum, Required: 2}, abc, []string{`a1="a"`, `a2="b"`, `a3="c"`}, StatusCancelled, "", "cannot be reached", 2},
		{"multi choice: the same set", TypeMultiChoice, Consensus{Mode: ModeAll}, []string{"a1", "a2"}, []string{`a1=["b","a"]`, `a2=["a","b"]`}, StatusAnswered, `["b","a"]`, "", 2},
		{"all split", TypeSingleChoice, Consensus{Mode: ModeAll}, abc, []string{`a1="a"`, `a2="b"`}, StatusCancelled, "", "everyone had to agree", 3},
		{"all free text", TypeFreeText, Consensus{Mode: ModeAll}, []string{"a1", "a2"}, []string{`a2="x"`, `a1="y"`}, StatusAnswered, `["x","y"]`, "", 2},
		{"all free text waits", TypeFreeText, Consensus{Mode: ModeAll}, []string{"a1", "a2"}, []string{`a2="x"`}, "", "", "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, tr := counted(t, tt.typ, tt.c, tt.electorate, tt.votes...)
			if in.VotesNeeded != tt.needed {
				t.Errorf("votes needed %d, want %d", in.VotesNeeded, tt.needed)
			}
			if tt.status == "" {
				if tr != nil {
					t.Fatalf("decided %+v, want undecided", tr)
				}
				return
			}
			if tr == nil {
				t.Fatalf("undecided, want %s", tt.status)
			}
			if tr.Status != tt.status || string(tr.Value) != tt.value || !strings.Contains(tr.Reason, tt.reason) {
				t.Errorf("got %s %s %q, want %s %s containing %q", tr.Status, tr.Value, tr.Reason, tt.status, tt.value, tt.reason)
			}
		})
	}
}

func TestConsensusValidation(t *testing.T) {
	no := false
	tests := []struct {
		name string
		req  CreateRequest
		err  string
	}{
		{"majority on free text", CreateRequest{Consensus: &Consensus{Mode: ModeMajority}}, "use first or all"},
		{"veto on a choice", CreateRequest{Type: TypeSingleChoice, Options: OptionList{{Key: "a"}}, Consensus: &Consensus{Mode: ModeAll, Veto: true}}, "only for approvals"},
		{"quorum without required", CreateRequest{Type: TypeApproval, Consensus: &Consensus{Mode: ModeQuorum}}, "needs required"},
		{"required without quorum", CreateRequest{Type: TypeApproval, Consensus: &Consensus{Mode: ModeAll, Required: 2}}, "only for mode quorum"},
		{"unknown mode", CreateRequest{Type: TypeApproval, Consensus: &Consensus{Mode: "most"}}, "must be first, all, majority or quorum"},
		{"all on an action", CreateRequest{Type: TypeAction, Action: &Action{Name: "Bash"}, Consensus: &Consensus{Mode: ModeAll}}, "not supported for actions"},
		{"unknown claim mode", CreateRequest{ClaimMode: "mine"}, "claim must be"},
		{"first with nothing else is dropped", CreateRequest{Consensus: &Consensus{Mode: ModeFirst, ExcludeRequester: &no}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Question = "Q?"
			in, err := NewInteraction(tt.req, Caller{Name: "bot"}, time.Unix(0, 0))
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("got %v", err)
			case tt.err == "" && in.Consensus != nil:
				t.Errorf("consensus %+v kept, want none", in.Consensus)
			case tt.err != "" && (ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), tt.err)):
				t.Errorf("got %v, want 400 with %q", err, tt.err)
			}
		})
	}
	// on_behalf_of makes the requester excluded by default.
	in, err := NewInteraction(CreateRequest{Question: "Q?", OnBehalfOf: "alice"}, Caller{Name: "bot"}, time.Unix(0, 0))
	if err != nil || !in.ExcludesRequester() || in.Requester() != "alice" {
		t.Fatalf("on_behalf_of: %+v, %v", in.Consensus, err)
	}
	if err := CanVote(Caller{Name: "alice"}, in); ErrorCode(err) != EFORBIDDEN {
		t.Errorf("alice votes on her own request: %v", err)
	}
}

func TestCleanOnBehalfOf(t *testing.T) {
	for _, tt := range []struct{ given, want string }{
		{"", ""}, {"alice", "alice"}, {" Alice\t", "Alice"}, {"a.b_c@d+e-f", "a.b_c@d+e-f"},
	} {
		if got, err := CleanOnBehalfOf(tt.given); err != nil || got != tt.want {
			t.Errorf("CleanOnBehalfOf(%q) = %q, %v; want %q", tt.given, got, err, tt.want)
		}
	}
	for _, given := range []string{" ", "alice\u200b", "\u0430lice", "al ice", "alice\u2060", "\xff", strings.Repeat("a", MaxNameLen+1)} {
		if _, err := CleanOnBehalfOf(given); ErrorCode(err) != EINVALID {
			t.Errorf("CleanOnBehalfOf(%q): %v; want %s", given, err, EINVALID)
		}
		if _, err := NewInteraction(CreateRequest{Question: "Q?", OnBehalfOf: given}, Caller{Name: "bot"}, time.Unix(0, 0)); ErrorCode(err) != EINVALID {
			t.Errorf("NewInteraction with on_behalf_of %q: %v; want %s", given, err, EINVALID)
		}
	}
}
