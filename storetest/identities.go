package storetest

import (
	"crypto/sha256"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// RunIdentities runs the conformance suite of hitl.Identities. newStore
// must return a new, empty store for each call and close it when the test
// ends.
func RunIdentities(t *testing.T, newStore func(t *testing.T) hitl.Identities) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s hitl.Identities)
	}{
		{"Empty", testIdentitiesEmpty},
		{"UserRoundTrip", testUserRoundTrip},
		{"UserNotFound", testUserNotFound},
		{"TokenRoundTrip", testTokenRoundTrip},
		{"TokenConflicts", testTokenConflicts},
		{"RevokeTokens", testRevokeTokens},
		{"Session", testSession},
		{"SessionEndsWithUser", testSessionEndsWithUser},
		{"SessionPurge", testSessionPurge},
		{"LoginFailures", testLoginFailures},
		{"EmbedTokenRoundTrip", testEmbedTokenRoundTrip},
		{"EmbedTokenExpiry", testEmbedTokenExpiry},
		{"SignInCreatesThenRefreshes", testSignInCreatesThenRefreshes},
		{"SignInNameTaken", testSignInNameTaken},
		{"DisableUser", testDisableUser},
		{"SignInStateOnce", testSignInStateOnce},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

// secretHash is the SHA-256 of a made-up secret.
func secretHash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

func newUser(name string, groups ...string) *hitl.User {
	if groups == nil {
		groups = []string{}
	}
	return &hitl.User{Name: name, Email: name + "@example.com", Groups: groups, PasswordHash: "$argon2id$" + name, CreatedAt: base}
}

func newToken(id, name string, role hitl.Role, n int) *hitl.Token {
	return &hitl.Token{ID: id, Name: name, Role: role, Groups: []string{}, Prefix: "hitl_" + id, Hash: secretHash(id), CreatedAt: at(n)}
}

func mustCreateUser(t *testing.T, s hitl.Identities, u *hitl.User) {
	t.Helper()
	if err := s.CreateUser(t.Context(), u); err != nil {
		t.Fatalf("CreateUser(%s): %v", u.Name, err)
	}
}

func mustCreateToken(t *testing.T, s hitl.Identities, tok *hitl.Token) {
	t.Helper()
	if err := s.CreateToken(t.Context(), tok); err != nil {
		t.Fatalf("CreateToken(%s): %v", tok.ID, err)
	}
}

func hasIdentities(t *testing.T, s hitl.Identities) bool {
	t.Helper()
	ok, err := s.HasIdentities(t.Context())
	if err != nil {
		t.Fatalf("HasIdentities: %v", err)
	}
	return ok
}

func testIdentitiesEmpty(t *testing.T, s hitl.Identities) {
	if hasIdentities(t, s) {
		t.Error("HasIdentities of an empty store: got true, want false")
	}
	users, err := s.Users(t.Context())
	if err != nil || len(users) != 0 {
		t.Errorf("Users: got %v, %v; want none", users, err)
	}
	tokens, err := s.Tokens(t.Context())
	if err != nil || len(tokens) != 0 {
		t.Errorf("Tokens: got %v, %v; want none", tokens, err)
	}
	fails, err := s.LoginFailures(t.Context(), 10)
	if err != nil || len(fails) != 0 {
		t.Errorf("LoginFailures: got %v, %v; want none", fails, err)
	}
}

func testUserRoundTrip(t *testing.T, s hitl.Identities) {
	bob := newUser("bob", "ops", "security")
	bob.Admin = true
	alice := newUser("alice")
	mustCreateUser(t, s, bob)
	mustCreateUser(t, s, alice)
	if !hasIdentities(t, s) {
		t.Error("HasIdentities with two users: got false, want true")
	}
	got, err := s.User(t.Context(), "bob")
	if err != nil {
		t.Fatalf("User(bob): %v", err)
	}
	if d := cmp.Diff(bob, got); d != "" {
		t.Errorf("User(bob) (-want +got):\n%s", d)
	}
	if got.Role() != hitl.RoleAdmin {
		t.Errorf("bob's role: got %s, want admin", got.Role())
	}
	users, err := s.Users(t.Context())
	if err != nil {
		t.Fatalf("Users: %v", err)
	}
	if d := cmp.Diff([]*hitl.User{alice, bob}, users); d != "" {
		t.Errorf("Users, by name (-want +got):\n%s", d)
	}

	err = s.CreateUser(t.Context(), newUser("alice"))
	wantCode(t, "CreateUser(alice) again", err, hitl.ECONFLICT)

	if err := s.SetPassword(t.Context(), "alice", "$argon2id$new"); err != nil {
		t.Fatalf("SetPassword: %v", err)
	}
	got, err = s.User(t.Context(), "alice")
	if err != nil || got.PasswordHash != "$argon2id$new" {
		t.Errorf("after SetPassword: got hash %q, %v; want the new hash", got.PasswordHash, err)
	}

	if err := s.DeleteUser(t.Context(), "alice"); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}
	_, err = s.User(t.Context(), "alice")
	wantCode(t, "User(alice) after DeleteUser", err, hitl.ENOTFOUND)
}

func testUserNotFound(t *testing.T, s hitl.Identities) {
	_, err := s.User(t.Context(), "nobody")
	wantCode(t, "User", err, hitl.ENOTFOUND)
	wantCode(t, "SetPassword", s.SetPassword(t.Context(), "nobody", "x"), hitl.ENOTFOUND)
	wantCode(t, "DeleteUser", s.DeleteUser(t.Context(), "nobody"), hitl.ENOTFOUND)
}

func testTokenRoundTrip(t *testing.T, s hitl.Identities) {
	agent := newToken("tok1", "build-bot", hitl.RoleAgent, 1)
	bot := newToken("tok2", "slack-bot", hitl.RoleResponder, 2)
	bot.Groups = []string{"ops"}
	mustCreateToken(t, s, bot)
	if !hasIdentities(t, s) {
		t.Error("HasIdentities with a token: got false, want true")
	}
	mustCreateToken(t, s, agent)

	got, err := s.TokenByHash(t.Context(), secretHash("tok2"))
	if err != nil {
		t.Fatalf("TokenByHash: %v", err)
	}
	if d := cmp.Diff(bot, got); d != "" {
		t.Errorf("TokenByHash (-want +got):\n%s", d)
	}
	_, err = s.TokenByHash(t.Context(), secretHash("tok3"))
	wantCode(t, "TokenByHash(unknown)", err, hitl.ENOTFOUND)

	tokens, err := s.Tokens(t.Context())
	if err != nil {
		t.Fatalf("Tokens: %v", err)
	}
	if d := cmp.Diff([]*hitl.Token{agent, bot}, tokens); d != "" {
		t.Errorf("Tokens, oldest first (-want +got):\n%s", d)
	}
}

func testTokenConflicts(t *testing.T, s hitl.Identities) {
	mustCreateToken(t, s, newToken("tok1", "build-bot", hitl.RoleAgent, 1))
	sameID := newToken("tok1", "other", hitl.RoleAgent, 2)
	sameID.Hash = secretHash("another secret")
	wantCode(t, "CreateToken(same ID)", s.CreateToken(t.Context(), sameID), hitl.ECONFLICT)
	sameHash := newToken("tok2", "other", hitl.RoleAgent, 2)
	sameHash.Hash = secretHash("tok1")
	wantCode(t, "CreateToken(same hash)", s.CreateToken(t.Context(), sameHash), hitl.ECONFLICT)
	wantCode(t, "CreateToken(bad role)", s.CreateToken(t.Context(), newToken("tok3", "x", "root", 3)), hitl.EINVALID)
	// A second token with the same name is how a token is rotated.
	mustCreateToken(t, s, newToken("tok4", "build-bot", hitl.RoleAgent, 4))
}

func testRevokeTokens(t *testing.T, s hitl.Identities) {
	a1 := newToken("a1", "build-bot", hitl.RoleAgent, 1)
	a2 := newToken("a2", "build-bot", hitl.RoleAgent, 2)
	b := newToken("b", "deploy-bot", hitl.RoleAgent, 3)
	named := newToken("c", "a2", hitl.RoleAgent, 4) // named like a2's ID
	for _, tok := range []*hitl.Token{a1, a2, b, named} {
		mustCreateToken(t, s, tok)
	}
	revoke := func(nameOrID string) []*hitl.Token {
		t.Helper()
		got, err := s.RevokeTokens(t.Context(), nameOrID)
		if err != nil {
			t.Fatalf("RevokeTokens(%s): %v", nameOrID, err)
		}
		return got
	}
	if d := cmp.Diff([]*hitl.Token{a2}, revoke("a2")); d != "" {
		t.Errorf("revoke by ID, which wins over a name (-want +got):\n%s", d)
	}
	mustCreateToken(t, s, newToken("a3", "build-bot", hitl.RoleAgent, 5))
	got := revoke("build-bot")
	if d := cmp.Diff([]string{"a1", "a3"}, tokenIDs(got)); d != "" {
		t.Errorf("revoke by name (-want +got):\n%s", d)
	}
	_, err := s.RevokeTokens(t.Context(), "build-bot")
	wantCode(t, "RevokeTokens(build-bot) again", err, hitl.ENOTFOUND)
	_, err = s.TokenByHash(t.Context(), secretHash("a1"))
	wantCode(t, "TokenByHash(revoked)", err, hitl.ENOTFOUND)
	left, err := s.Tokens(t.Context())
	if err != nil {
		t.Fatalf("Tokens: %v", err)
	}
	if d := cmp.Diff([]string{"b", "c"}, tokenIDs(left)); d != "" {
		t.Errorf("tokens left (-want +got):\n%s", d)
	}
}

func tokenIDs(list []*hitl.Token) []string {
	out := make([]string, len(list))
	for i, tok := range list {
		out[i] = tok.ID
	}
	return out
}

func testSession(t *testing.T, s hitl.Identities) {
	alice := newUser("alice", "ops")
	mustCreateUser(t, s, alice)
	sess := &hitl.Session{Hash: secretHash("s1"), User: "alice", CreatedAt: at(0), ExpiresAt: at(100)}
	if err := s.CreateSession(t.Context(), sess); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	gotS, gotU, err := s.Session(t.Context(), secretHash("s1"), at(99))
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	if d := cmp.Diff(sess, gotS); d != "" {
		t.Errorf("Session (-want +got):\n%s", d)
	}
	if d := cmp.Diff(alice, gotU); d != "" {
		t.Errorf("Session's user (-want +got):\n%s", d)
	}
	_, _, err = s.Session(t.Context(), secretHash("s1"), at(100))
	wantCode(t, "Session at its expiry", err, hitl.ENOTFOUND)
	_, _, err = s.Session(t.Context(), secretHash("s2"), at(1))
	wantCode(t, "Session(unknown)", err, hitl.ENOTFOUND)

	if err := s.DeleteSession(t.Context(), secretHash("s1")); err != nil {
		t.Fatalf("DeleteSession: %v", err)
	}
	_, _, err = s.Session(t.Context(), secretHash("s1"), at(1))
	wantCode(t, "Session after DeleteSession", err, hitl.ENOTFOUND)
	if err := s.DeleteSession(t.Context(), secretHash("s1")); err != nil {
		t.Errorf("DeleteSession again: got %v, want nil", err)
	}

	err = s.CreateSession(t.Context(), &hitl.Session{Hash: secretHash("s3"), User: "nobody", CreatedAt: at(0), ExpiresAt: at(100)})
	wantCode(t, "CreateSession(unknown user)", err, hitl.ENOTFOUND)
}

// testSessionEndsWithUser checks that a new password and a deleted user
// end the user's sessions, and only theirs.
func testSessionEndsWithUser(t *testing.T, s hitl.Identities) {
	mustCreateUser(t, s, newUser("alice"))
	mustCreateUser(t, s, newUser("bob"))
	for _, sess := range []*hitl.Session{
		{Hash: secretHash("a1"), User: "alice", CreatedAt: at(0), ExpiresAt: at(100)},
		{Hash: secretHash("a2"), User: "alice", CreatedAt: at(0), ExpiresAt: at(100)},
		{Hash: secretHash("b1"), User: "bob", CreatedAt: at(0), ExpiresAt: at(100)},
	} {
		if err := s.CreateSession(t.Context(), sess); err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
	}
	live := func(secret string) bool {
		t.Helper()
		_, _, err := s.Session(t.Context(), secretHash(secret), at(1))
		if err != nil && hitl.ErrorCode(err) != hitl.ENOTFOUND {
			t.Fatalf("Session(%s): %v", secret, err)
		}
		return err == nil
	}
	if err := s.SetPassword(t.Context(), "alice", "new"); err != nil {
		t.Fatalf("SetPassword: %v", err)
	}
	if live("a1") || live("a2") || !live("b1") {
		t.Errorf("after alice's new password: live a1 %v a2 %v b1 %v, want false false true", live("a1"), live("a2"), live("b1"))
	}
	push, _ := s.(hitl.PushStore)
	if push != nil {
		for _, u := range []string{"alice", "bob"} {
			sub := &hitl.PushSubscription{Endpoint: "https://push.example/" + u, User: u, P256DH: "k", Auth: "a", CreatedAt: at(1)}
			if err := push.SavePushSubscription(t.Context(), sub); err != nil {
				t.Fatalf("SavePushSubscription: %v", err)
			}
		}
	}
	if err := s.DeleteUser(t.Context(), "bob"); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}
	if live("b1") {
		t.Error("bob's session outlived bob")
	}
	if push != nil {
		list, err := push.PushSubscriptions(t.Context(), "")
		if err != nil || len(list) != 1 || list[0].User != "alice" {
			t.Errorf("push subscriptions after DeleteUser(bob): got %v, %v; want alice's only", list, err)
		}
	}
}

// testSessionPurge checks that CreateSession drops expired sessions.
func testSessionPurge(t *testing.T, s hitl.Identities) {
	mustCreateUser(t, s, newUser("alice"))
	create := func(secret string, created, expires int) {
		t.Helper()
		sess := &hitl.Session{Hash: secretHash(secret), User: "alice", CreatedAt: at(created), ExpiresAt: at(expires)}
		if err := s.CreateSession(t.Context(), sess); err != nil {
			t.Fatalf("CreateSession(%s): %v", secret, err)
		}
	}
	create("old", 0, 10)
	create("kept", 0, 1000)
	create("new", 20, 1000) // old expired before this began
	// Asked about a time before old expired, the store no longer has it.
	_, _, err := s.Session(t.Context(), secretHash("old"), at(5))
	wantCode(t, "Session(old) after the purge", err, hitl.ENOTFOUND)
	if _, _, err := s.Session(t.Context(), secretHash("kept"), at(5)); err != nil {
		t.Errorf("Session(kept): %v", err)
	}
}

func testLoginFailures(t *testing.T, s hitl.Identities) {
	want := []*hitl.LoginFailure{
		{At: at(3), Username: "mallory", RemoteAddr: "192.0.2.3", Reason: "unknown user"},
		{At: at(2), Username: "alice", RemoteAddr: "192.0.2.2", Reason: "wrong password"},
		{At: at(1), Username: "alice", RemoteAddr: "192.0.2.1", Reason: "wrong password"},
	}
	for i := len(want) - 1; i >= 0; i-- {
		if err := s.RecordLoginFailure(t.Context(), want[i]); err != nil {
			t.Fatalf("RecordLoginFailure: %v", err)
		}
	}
	got, err := s.LoginFailures(t.Context(), 2)
	if err != nil {
		t.Fatalf("LoginFailures: %v", err)
	}
	if d := cmp.Diff(want[:2], got); d != "" {
		t.Errorf("LoginFailures(2), newest first (-want +got):\n%s", d)
	}
	if hasIdentities(t, s) {
		t.Error("HasIdentities after failed logins only: got true, want false")
	}
}
