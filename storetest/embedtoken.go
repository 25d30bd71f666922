package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

func newEmbedToken(id, user string, created, expires int, sessions ...string) *hitl.EmbedToken {
	return &hitl.EmbedToken{ID: id, User: user, SessionIDs: sessions, Prefix: "hitl_embed_" + id[:2],
		Hash: secretHash("embed-" + id), CreatedBy: "admin", CreatedAt: at(created), ExpiresAt: at(expires)}
}

func testEmbedTokenRoundTrip(t *testing.T, s hitl.Identities) {
	mustCreateUser(t, s, newUser("alice", "ops"))
	want := newEmbedToken("e1", "alice", 0, 3600, "s1", "s2")
	if err := s.CreateEmbedToken(t.Context(), want); err != nil {
		t.Fatalf("CreateEmbedToken: %v", err)
	}
	got, u, err := s.EmbedTokenByHash(t.Context(), want.Hash, at(1))
	if err != nil {
		t.Fatalf("EmbedTokenByHash: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("embed token (-want +got):\n%s", diff)
	}
	if u.Name != "alice" || !cmp.Equal(u.Groups, []string{"ops"}) {
		t.Errorf("user: got %s %v, want alice [ops]", u.Name, u.Groups)
	}
	if !got.Covers("s2") || got.Covers("s3") || got.Covers("") {
		t.Errorf("Covers: s2 %v s3 %v '' %v, want true false false", got.Covers("s2"), got.Covers("s3"), got.Covers(""))
	}
	if err := s.CreateEmbedToken(t.Context(), newEmbedToken("e1", "alice", 0, 10, "s1")); hitl.ErrorCode(err) != hitl.ECONFLICT {
		t.Errorf("same ID again: got %v, want ECONFLICT", err)
	}
	if err := s.CreateEmbedToken(t.Context(), newEmbedToken("e9", "nobody", 0, 10, "s1")); hitl.ErrorCode(err) != hitl.ENOTFOUND {
		t.Errorf("for no user: got %v, want ENOTFOUND", err)
	}
}

func testEmbedTokenExpiry(t *testing.T, s hitl.Identities) {
	mustCreateUser(t, s, newUser("alice"))
	mustCreateUser(t, s, newUser("bob"))
	for _, e := range []*hitl.EmbedToken{
		newEmbedToken("e1", "alice", 0, 10, "s1"),
		newEmbedToken("e2", "alice", 1, 100, "s1"),
		newEmbedToken("e3", "bob", 2, 100, "s2"),
	} {
		if err := s.CreateEmbedToken(t.Context(), e); err != nil {
			t.Fatalf("CreateEmbedToken(%s): %v", e.ID, err)
		}
	}
	if _, _, err := s.EmbedTokenByHash(t.Context(), secretHash("embed-e1"), at(10)); hitl.ErrorCode(err) != hitl.ENOTFOUND {
		t.Errorf("expired token: got %v, want ENOTFOUND", err)
	}
	ids := func(user string, n int) []string {
		t.Helper()
		list, err := s.EmbedTokensOf(t.Context(), user, at(n))
		if err != nil {
			t.Fatalf("EmbedTokensOf: %v", err)
		}
		out := []string{}
		for _, e := range list {
			out = append(out, e.ID)
		}
		return out
	}
	if got, want := ids("alice", 5), []string{"e1", "e2"}; !cmp.Equal(got, want) {
		t.Errorf("alice's at 5 s: got %v, want %v", got, want)
	}
	if got, want := ids("", 50), []string{"e2", "e3"}; !cmp.Equal(got, want) {
		t.Errorf("everyone's at 50 s: got %v, want %v", got, want)
	}
	if err := s.RevokeEmbedToken(t.Context(), "e2"); err != nil {
		t.Fatalf("RevokeEmbedToken: %v", err)
	}
	if err := s.RevokeEmbedToken(t.Context(), "e2"); hitl.ErrorCode(err) != hitl.ENOTFOUND {
		t.Errorf("revoke twice: got %v, want ENOTFOUND", err)
	}
	if _, _, err := s.EmbedTokenByHash(t.Context(), secretHash("embed-e2"), at(5)); hitl.ErrorCode(err) != hitl.ENOTFOUND {
		t.Errorf("revoked token: got %v, want ENOTFOUND", err)
	}
	if err := s.DeleteUser(t.Context(), "bob"); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}
	if _, _, err := s.EmbedTokenByHash(t.Context(), secretHash("embed-e3"), at(5)); hitl.ErrorCode(err) != hitl.ENOTFOUND {
		t.Errorf("token of a removed user: got %v, want ENOTFOUND", err)
	}
}
