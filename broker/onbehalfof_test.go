package broker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
)

// on_behalf_of names a person: spelt in another case or with spaces
// around it, it is that person, who is then excluded as the requester;
// invisible characters, letters of another script that look alike, or a
// name no one has are refused, so a requester cannot be made to look
// excluded while still able to answer.
func TestOnBehalfOfNamesAPerson(t *testing.T) {
	b := team(t)
	yes := true
	for _, given := range []string{"alice", "Alice", "ALICE", " alice", "alice ", "\talice\n"} {
		in := ask(t, b, hitl.CreateRequest{Type: hitl.TypeApproval, Targets: opsTargets(), OnBehalfOf: given,
			Consensus: &hitl.Consensus{Mode: hitl.ModeFirst, ExcludeRequester: &yes}})
		if in.OnBehalfOf != "alice" {
			t.Errorf("on_behalf_of %q: stored %q, want alice", given, in.OnBehalfOf)
		}
		err := refused(t, b, in.ID, "alice", `true`, hitl.EFORBIDDEN)
		if !strings.Contains(hitl.ErrorMessage(err), "alice asked this question") {
			t.Errorf("on_behalf_of %q: alice refused with %q", given, hitl.ErrorMessage(err))
		}
	}
	for _, given := range []string{
		"alice\u200b", // zero-width space
		"\u200balice", // zero-width space first
		"al\u00adice", // soft hyphen
		"alice\ufeff", // byte order mark
		"\u0430lice",  // Cyrillic а
		"\uff41lice",  // fullwidth ａ
		"al ice",      // a space inside
		"zed",         // no such person
		"alice\u0301", // a combining accent
		strings.Repeat("a", 65),
	} {
		_, _, err := b.Create(agent, hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Deploy?", Targets: opsTargets(), OnBehalfOf: given,
			Consensus: &hitl.Consensus{Mode: hitl.ModeFirst, ExcludeRequester: &yes}})
		if hitl.ErrorCode(err) != hitl.EINVALID || !strings.Contains(hitl.ErrorMessage(err), "on_behalf_of") {
			t.Errorf("on_behalf_of %q: %v; want invalid, naming on_behalf_of", given, err)
		}
	}
}

// Where two people's names differ only in case, on_behalf_of must name
// one exactly.
func TestOnBehalfOfAmbiguousCase(t *testing.T) {
	b, ids := withIdentities(t, nil)
	for _, name := range []string{"Sam", "sam"} {
		if err := ids.CreateUser(context.Background(), &hitl.User{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"Sam", "sam"} {
		if in := ask(t, b, hitl.CreateRequest{OnBehalfOf: name}); in.OnBehalfOf != name {
			t.Errorf("on_behalf_of %q: stored %q", name, in.OnBehalfOf)
		}
	}
	_, _, err := b.Create(agent, hitl.CreateRequest{Question: "Deploy?", OnBehalfOf: "SAM"})
	if hitl.ErrorCode(err) != hitl.EINVALID || !strings.Contains(hitl.ErrorMessage(err), "Sam") || !strings.Contains(hitl.ErrorMessage(err), "sam") {
		t.Errorf("on_behalf_of SAM among Sam and sam: %v; want invalid, naming both", err)
	}
}

// The same person spelt two ways is the same question.
func TestOnBehalfOfIdempotent(t *testing.T) {
	b := team(t)
	first := ask(t, b, hitl.CreateRequest{OnBehalfOf: "alice", IdempotencyKey: "k1"})
	again, created, err := b.Create(agent, hitl.CreateRequest{Question: "Deploy?", Timeout: 600, OnBehalfOf: " Alice", IdempotencyKey: "k1"})
	if err != nil {
		t.Fatalf("repeat with on_behalf_of \" Alice\": %v; want the first question", err)
	}
	if created || again.ID != first.ID {
		t.Errorf("repeat with on_behalf_of \" Alice\": created %t, id %s; want %s", created, again.ID, first.ID)
	}
}
