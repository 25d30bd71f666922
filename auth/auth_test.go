package auth_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/auth"
)

func TestPassword(t *testing.T) {
	hash, err := auth.HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hash, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(hash, "correct horse") {
		t.Errorf("hash %q: want an argon2id PHC string without the password", hash)
	}
	again, err := auth.HashPassword("correct horse")
	if err != nil || again == hash {
		t.Errorf("the same password hashed twice: got %q and %q, want different salts", hash, again)
	}
	for _, tt := range []struct {
		password string
		want     bool
	}{
		{"correct horse", true},
		{"correct horsE", false},
		{"", false},
		{"correct horse" + strings.Repeat("x", 2000), false},
	} {
		got, err := auth.CheckPassword(hash, tt.password)
		if err != nil || got != tt.want {
			t.Errorf("CheckPassword(%.20q): got %v, %v; want %v", tt.password, got, err, tt.want)
		}
	}
	if _, err := auth.HashPassword("short"); err == nil {
		t.Error("HashPassword(short): got nil error, want a refusal")
	}
}

func TestCheckPasswordBadHash(t *testing.T) {
	for _, hash := range []string{
		"", "plaintext", "$argon2i$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=18$m=19456,t=2,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=99999999,t=2,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=19456,t=2,p=1$!!$a2V5a2V5a2V5a2V5a2V5a2V5",
	} {
		if ok, err := auth.CheckPassword(hash, "whatever"); ok || !errors.Is(err, auth.ErrBadHash) {
			t.Errorf("CheckPassword(%q): got %v, %v; want false, ErrBadHash", hash, ok, err)
		}
	}
}

func TestToken(t *testing.T) {
	secret, hash, display := auth.NewToken()
	if !auth.LooksLikeToken(secret) || len(secret) != 45 {
		t.Errorf("token %q: want hitl_ and 40 base62 characters", secret)
	}
	if !strings.HasPrefix(secret, display) || len(display) != 12 {
		t.Errorf("display %q: want the first 12 characters of %q", display, secret)
	}
	if !bytes.Equal(hash, auth.HashSecret(secret)) || bytes.Contains(hash, []byte(secret[5:])) {
		t.Errorf("hash %x: want the SHA-256 of the token", hash)
	}
	other, _, _ := auth.NewToken()
	if other == secret {
		t.Error("two tokens are equal")
	}
	for _, s := range []string{"", "hitl_", secret[:44], secret + "x", "Hitl_" + secret[5:], secret[:44] + "-"} {
		if auth.LooksLikeToken(s) {
			t.Errorf("LooksLikeToken(%q): got true, want false", s)
		}
	}
}

func TestSessionSecretAndID(t *testing.T) {
	a, ha := auth.NewSessionSecret()
	b, _ := auth.NewSessionSecret()
	if a == b || len(a) != 43 || !bytes.Equal(ha, auth.HashSecret(a)) {
		t.Errorf("session secrets %q %q: want two different 43-character secrets, hashed", a, b)
	}
	id := auth.NewID()
	if len(id) != 10 || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
		t.Errorf("NewID: got %q, want 10 lowercase letters and digits", id)
	}
}
