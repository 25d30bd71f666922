package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// providerUser is a person of the provider iss, as a sign-in presents
// them.
func providerUser(name, sub string, admin bool, groups ...string) *hitl.User {
	if groups == nil {
		groups = []string{}
	}
	return &hitl.User{Name: name, Email: name, Groups: groups, Admin: admin,
		Issuer: "https://id.example.com", Subject: sub, CreatedAt: base}
}

func signIn(t *testing.T, s hitl.Identities, u *hitl.User) *hitl.User {
	t.Helper()
	got, err := s.SignInUser(t.Context(), u)
	if err != nil {
		t.Fatalf("SignInUser(%s): %v", u.Subject, err)
	}
	return got
}

func testSignInCreatesThenRefreshes(t *testing.T, s hitl.Identities) {
	first := providerUser("alice@example.com", "sub-1", false, "ops", "security")
	got := signIn(t, s, first)
	if d := cmp.Diff(first, got); d != "" {
		t.Errorf("first sign-in (-want +got):\n%s", d)
	}
	if !hasIdentities(t, s) {
		t.Error("HasIdentities after a first sign-in: got false, want true")
	}

	// The provider renamed her email, took "security" away and made her
	// an admin: the same user, under the name she got first.
	again := providerUser("alice.b@example.com", "sub-1", true, "ops")
	got = signIn(t, s, again)
	want := providerUser("alice@example.com", "sub-1", true, "ops")
	want.Email = "alice.b@example.com"
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("second sign-in (-want +got):\n%s", d)
	}
	stored, err := s.User(t.Context(), "alice@example.com")
	if err != nil {
		t.Fatalf("User: %v", err)
	}
	if d := cmp.Diff(want, stored); d != "" {
		t.Errorf("stored after the second sign-in (-want +got):\n%s", d)
	}
	users, err := s.Users(t.Context())
	if err != nil || len(users) != 1 {
		t.Errorf("Users: got %d, %v; want one user", len(users), err)
	}
}

func testSignInNameTaken(t *testing.T, s hitl.Identities) {
	mustCreateUser(t, s, newUser("bob@example.com"))
	_, err := s.SignInUser(t.Context(), providerUser("bob@example.com", "sub-2", false))
	wantCode(t, "SignInUser under a password user's name", err, hitl.ECONFLICT)
	got, err := s.User(t.Context(), "bob@example.com")
	if err != nil || got.Subject != "" || got.PasswordHash == "" {
		t.Errorf("the password user after a refused sign-in: got %+v, %v; want them unchanged", got, err)
	}

	signIn(t, s, providerUser("carol@example.com", "sub-3", false))
	_, err = s.SignInUser(t.Context(), providerUser("carol@example.com", "sub-4", false))
	wantCode(t, "SignInUser of another subject under a taken name", err, hitl.ECONFLICT)

	_, err = s.SignInUser(t.Context(), &hitl.User{Name: "dan", Issuer: "https://id.example.com"})
	wantCode(t, "SignInUser without a subject", err, hitl.EINVALID)
}

func testDisableUser(t *testing.T, s hitl.Identities) {
	alice := signIn(t, s, providerUser("alice@example.com", "sub-1", false, "ops"))
	mustCreateUser(t, s, newUser("bob"))
	sess := &hitl.Session{Hash: secretHash("s-alice"), User: alice.Name, CreatedAt: at(0), ExpiresAt: at(3600)}
	if err := s.CreateSession(t.Context(), sess); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	embed := newEmbedToken("e1", alice.Name, 0, 3600, "s1")
	if err := s.CreateEmbedToken(t.Context(), embed); err != nil {
		t.Fatalf("CreateEmbedToken: %v", err)
	}

	if err := s.SetUserDisabled(t.Context(), alice.Name, true); err != nil {
		t.Fatalf("SetUserDisabled: %v", err)
	}
	_, _, err := s.Session(t.Context(), sess.Hash, at(1))
	wantCode(t, "Session of a disabled user", err, hitl.ENOTFOUND)
	_, _, err = s.EmbedTokenByHash(t.Context(), embed.Hash, at(1))
	wantCode(t, "EmbedTokenByHash of a disabled user", err, hitl.ENOTFOUND)
	_, err = s.SignInUser(t.Context(), providerUser("alice@example.com", "sub-1", true, "ops"))
	wantCode(t, "SignInUser of a disabled user", err, hitl.EFORBIDDEN)
	got, err := s.User(t.Context(), alice.Name)
	if err != nil || !got.Disabled || got.Admin {
		t.Errorf("disabled user: got %+v, %v; want disabled, and not made admin by the refused sign-in", got, err)
	}
	// A session made for a disabled user (a login racing the disable)
	// does not hold either.
	late := &hitl.Session{Hash: secretHash("s-late"), User: alice.Name, CreatedAt: at(2), ExpiresAt: at(3600)}
	if err := s.CreateSession(t.Context(), late); err == nil {
		_, _, err = s.Session(t.Context(), late.Hash, at(3))
		wantCode(t, "a late session of a disabled user", err, hitl.ENOTFOUND)
	}

	if err := s.SetUserDisabled(t.Context(), alice.Name, false); err != nil {
		t.Fatalf("enable: %v", err)
	}
	if got := signIn(t, s, providerUser("alice@example.com", "sub-1", false, "ops")); got.Disabled {
		t.Error("sign-in after enabling: still disabled")
	}
	wantCode(t, "SetUserDisabled(nobody)", s.SetUserDisabled(t.Context(), "nobody", true), hitl.ENOTFOUND)
	if b, err := s.User(t.Context(), "bob"); err != nil || b.Disabled {
		t.Errorf("bob: got %+v, %v; want him untouched", b, err)
	}
}

func testSignInStateOnce(t *testing.T, s hitl.Identities) {
	h := secretHash("state-1")
	if err := s.UseSignInState(t.Context(), h, at(600)); err != nil {
		t.Fatalf("UseSignInState: %v", err)
	}
	wantCode(t, "UseSignInState again", s.UseSignInState(t.Context(), h, at(600)), hitl.ECONFLICT)
	if err := s.UseSignInState(t.Context(), secretHash("state-2"), at(600)); err != nil {
		t.Errorf("UseSignInState of another state: %v", err)
	}
}
