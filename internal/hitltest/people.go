package hitltest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/auth"
)

// Passwords of the test people (see AddPeople).
const (
	AlicePassword = "alice-correct-horse"
	BobPassword   = "bob-battery-staple"
	CarolPassword = "carol-admin-secret"
)

// people are the test people: alice (responder), bob (responder, group
// ops) and carol (admin, group ops).
var people = []struct {
	name, password string
	groups         []string
	admin          bool
}{
	{"alice", AlicePassword, nil, false},
	{"bob", BobPassword, []string{"ops"}, false},
	{"carol", CarolPassword, []string{"ops"}, true},
}

// AddPeople adds alice, bob and carol to ids, as hitl user add would.
func AddPeople(t testing.TB, ids hitl.Identities) {
	t.Helper()
	for _, p := range people {
		hash, err := auth.HashPassword(p.password)
		if err != nil {
			t.Fatal(err)
		}
		u := &hitl.User{Name: p.name, Groups: p.groups, Admin: p.admin, PasswordHash: hash}
		if err := ids.CreateUser(context.Background(), u); err != nil {
			t.Fatalf("create user %s: %v", p.name, err)
		}
	}
}

// Token creates an API token in ids, as hitl token create would, and
// returns its secret.
func Token(t testing.TB, ids hitl.Identities, name string, role hitl.Role) string {
	t.Helper()
	secret, hash, prefix := auth.NewToken()
	tok := &hitl.Token{ID: auth.NewID(), Name: name, Role: role, Prefix: prefix, Hash: hash}
	if err := ids.CreateToken(context.Background(), tok); err != nil {
		t.Fatalf("create token %s: %v", name, err)
	}
	return secret
}

// Login logs user in at the server at baseURL, over the API, and returns
// the session cookie (name and value only, as a browser sends it back).
func Login(t testing.TB, baseURL, user, password string) *http.Cookie {
	t.Helper()
	body, err := json.Marshal(map[string]string{"username": user, "password": password})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Post(baseURL+"/api/v1/auth/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("login %s: %v", user, err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login %s: status %d, want 200; body %s", user, resp.StatusCode, data)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "hitl_session" && c.Value != "" {
			return &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	t.Fatalf("login %s: no hitl_session cookie in %v", user, resp.Header["Set-Cookie"])
	return nil
}
