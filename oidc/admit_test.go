package oidc

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

func newTestProvider(t *testing.T, change func(*Config)) *Provider {
	t.Helper()
	cfg := Config{Issuer: "https://id.example.com", ClientID: "hitl", RedirectURL: "https://hitl.example.com" + CallbackPath,
		GroupRoles: map[string]hitl.Role{"/eng/ops": hitl.RoleResponder, "Platform Admins": hitl.RoleAdmin}}
	if change != nil {
		change(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGroupName(t *testing.T) {
	for in, want := range map[string]string{
		"ops": "ops", "/eng/ops": "eng.ops", "my-org:sre": "my-org.sre", "Platform Admins": "Platform-Admins",
		"1b2c3d4e-0000-4a4a-9b9b-123456789abc": "1b2c3d4e-0000-4a4a-9b9b-123456789abc",
	} {
		if got := GroupName(in); got != want {
			t.Errorf("GroupName(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestGroupsClaim(t *testing.T) {
	tests := []struct {
		claim any
		want  []string
		err   bool
	}{
		{nil, nil, false},
		{[]any{"ops", "sre"}, []string{"ops", "sre"}, false},
		{"ops,sre", []string{"ops", "sre"}, false},
		{[]any{"ops", 3}, nil, true},
		{map[string]any{"ops": true}, nil, true},
	}
	for _, tt := range tests {
		got, err := groupsOf(tt.claim)
		if (err != nil) != tt.err || !cmp.Equal(got, tt.want) {
			t.Errorf("groupsOf(%v): got %v, %v; want %v, error %v", tt.claim, got, err, tt.want, tt.err)
		}
	}
}

func TestAdmit(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		id     Identity
		want   *hitl.User // nil: refused
	}{
		{"responder by group", nil,
			Identity{Issuer: "https://id.example.com", Subject: "s1", Email: "a@example.com", EmailVerified: true, Groups: []string{"eng.ops"}},
			&hitl.User{Name: "a@example.com", Email: "a@example.com", Groups: []string{"eng.ops"}, Issuer: "https://id.example.com", Subject: "s1"}},
		{"admin beats responder", nil,
			Identity{Issuer: "i", Subject: "s2", Email: "b@example.com", EmailVerified: true, Groups: []string{"eng.ops", "Platform-Admins"}},
			&hitl.User{Name: "b@example.com", Email: "b@example.com", Groups: []string{"eng.ops", "Platform-Admins"}, Admin: true, Issuer: "i", Subject: "s2"}},
		{"no mapped group, no default", nil,
			Identity{Issuer: "i", Subject: "s3", Email: "c@example.com", EmailVerified: true, Groups: []string{"sales"}}, nil},
		{"no mapped group, default responder", func(c *Config) { c.DefaultRole = hitl.RoleResponder },
			Identity{Issuer: "i", Subject: "s4", Email: "d@example.com", EmailVerified: true},
			&hitl.User{Name: "d@example.com", Email: "d@example.com", Groups: []string{}, Issuer: "i", Subject: "s4"}},
		{"allowed domain", func(c *Config) { c.AllowedDomains = []string{"Example.com"} },
			Identity{Issuer: "i", Subject: "s5", Email: "e@EXAMPLE.com", EmailVerified: true, Groups: []string{"eng.ops"}},
			&hitl.User{Name: "e@EXAMPLE.com", Email: "e@EXAMPLE.com", Groups: []string{"eng.ops"}, Issuer: "i", Subject: "s5"}},
		{"other domain", func(c *Config) { c.AllowedDomains = []string{"example.com"} },
			Identity{Issuer: "i", Subject: "s6", Email: "f@example.com.evil.test", EmailVerified: true, Groups: []string{"eng.ops"}}, nil},
		{"unverified email in an allowed domain", func(c *Config) { c.AllowedDomains = []string{"example.com"} },
			Identity{Issuer: "i", Subject: "s7", Email: "g@example.com", Groups: []string{"eng.ops"}}, nil},
		{"unverified email is neither name nor address", nil,
			Identity{Issuer: "i", Subject: "s8", Email: "boss@example.com", Username: "mallory", Groups: []string{"eng.ops"}},
			&hitl.User{Name: "mallory", Groups: []string{"eng.ops"}, Issuer: "i", Subject: "s8"}},
		{"no usable name", nil,
			Identity{Issuer: "i", Subject: "s9", Username: "Mallory Q", Groups: []string{"eng.ops"}},
			&hitl.User{Name: "oidc-" + hashName("i\x00s9"), Groups: []string{"eng.ops"}, Issuer: "i", Subject: "s9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newTestProvider(t, tt.change).Admit(&tt.id)
			if tt.want == nil {
				if err == nil || hitl.ErrorCode(err) != hitl.EFORBIDDEN {
					t.Errorf("got %+v, %v; want EFORBIDDEN", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// hashName is the start of the SHA-256 of s, in hex.
func hashName(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
