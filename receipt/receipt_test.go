package receipt_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/receipt"
	"github.com/hitl-sh/hitl/secret"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var approvedAt = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// approved returns an action approved by ada, or edited to args when
// edited is set.
func approved(edited string) *hitl.Interaction {
	value := `{"decision":"approve"}`
	if edited != "" {
		value = `{"args":` + edited + `,"decision":"edit"}`
	}
	return &hitl.Interaction{
		ID: "int-1", Type: hitl.TypeAction, Status: hitl.StatusAnswered, SourceAgent: "claude-code",
		Action: &hitl.Action{Name: "Bash", Kind: "shell", Args: json.RawMessage(`{"command":"ls","timeout":5}`)},
		Result: &hitl.Result{Value: json.RawMessage(value), RespondedBy: "ada", RespondedAt: approvedAt},
	}
}

// newService starts a receipt service over a fresh SQLite store, sealed
// with a fixed key, on clk.
func newService(t *testing.T, store hitl.NotificationStore, clk *clock) *receipt.Service {
	t.Helper()
	c, err := secret.NewCipher(make([]byte, secret.KeySize), hitl.ChannelReceipt)
	if err != nil {
		t.Fatal(err)
	}
	s := receipt.New(store, &receipt.Options{Cipher: c, Issuer: "https://hitl.example", TTL: time.Hour, Now: clk.now})
	if err := s.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s
}

func openStore(t *testing.T) hitl.NotificationStore {
	t.Helper()
	s := hitltest.OpenStore(t, hitltest.SQLiteDB(t), nil)
	t.Cleanup(func() { s.Close() })
	return s.(hitl.NotificationStore)
}

func TestVerify(t *testing.T) {
	clk := &clock{approvedAt.Add(time.Minute)}
	store := openStore(t)
	s := newService(t, store, clk)
	token, err := s.IssueReceipt(approved(""))
	if err != nil || token == "" {
		t.Fatalf("IssueReceipt: %q, %v", token, err)
	}
	edited, err := s.IssueReceipt(approved(`{"command":"ls -la"}`))
	if err != nil {
		t.Fatal(err)
	}
	forged := token[:len(token)-4] + flip(token[len(token)-4:])
	// A receipt signed by another server's key, with the same claims.
	other := newService(t, openStore(t), clk)
	foreign, err := other.IssueReceipt(approved(""))
	if err != nil {
		t.Fatal(err)
	}
	exact := hitl.ReceiptExpectation{InteractionID: "int-1", Kind: "shell", Name: "Bash", Args: json.RawMessage(`{ "timeout": 5, "command": "ls" }`)}
	tests := []struct {
		name   string
		token  string
		expect hitl.ReceiptExpectation
		at     time.Time
		reason string // "" for valid
	}{
		{"valid, args in another key order", token, exact, clk.t, ""},
		{"edited args", edited, hitl.ReceiptExpectation{Args: json.RawMessage(`{"command":"ls -la"}`)}, clk.t, ""},
		{"proposed args of an edited action", edited, hitl.ReceiptExpectation{Args: json.RawMessage(`{"command":"ls","timeout":5}`)}, clk.t, "other args"},
		{"other args", token, hitl.ReceiptExpectation{Args: json.RawMessage(`{"command":"rm -rf /","timeout":5}`)}, clk.t, "other args"},
		{"another tool", token, hitl.ReceiptExpectation{Name: "Write"}, clk.t, `for tool "Bash", not "Write"`},
		{"another kind", token, hitl.ReceiptExpectation{Kind: "file_write"}, clk.t, `for kind "shell"`},
		{"another interaction", token, hitl.ReceiptExpectation{InteractionID: "int-2"}, clk.t, "for interaction int-1, not int-2"},
		{"expired", token, exact, approvedAt.Add(time.Hour), "expired at 2026-03-01T13:00:00Z"},
		{"forged signature", forged, exact, clk.t, "signature does not verify"},
		{"another server's key", foreign, exact, clk.t, "not published"},
		{"garbage", "not.a.jws", exact, clk.t, "not a compact JWS"},
		{"none", "", exact, clk.t, "no receipt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk.t = tt.at
			defer func() { clk.t = approvedAt.Add(time.Minute) }()
			c, err := s.Verify(t.Context(), tt.token, tt.expect)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Verify: %v; want valid", err)
				}
				if c.InteractionID != "int-1" || c.Agent != "claude-code" || c.ApprovedBy != "ada" || c.Issuer != "https://hitl.example" {
					t.Errorf("claims: got %+v", c)
				}
				return
			}
			if err == nil || !strings.Contains(hitl.ErrorMessage(err), tt.reason) {
				t.Fatalf("Verify: got %v; want a reason with %q", err, tt.reason)
			}
			if hitl.ErrorCode(err) != hitl.EINVALID {
				t.Errorf("code: got %s, want %s", hitl.ErrorCode(err), hitl.EINVALID)
			}
		})
	}
}

// flip changes the first character of s.
func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

func TestIssueReceiptOnlyForApprovedActions(t *testing.T) {
	s := newService(t, openStore(t), &clock{approvedAt})
	rejected := approved("")
	rejected.Result.Value = json.RawMessage(`{"decision":"reject","message":"no"}`)
	pending := approved("")
	pending.Status, pending.Result = hitl.StatusPending, nil
	question := approved("")
	question.Type, question.Action = hitl.TypeApproval, nil
	for name, in := range map[string]*hitl.Interaction{"rejected": rejected, "pending": pending, "question": question} {
		if got, err := s.IssueReceipt(in); got != "" || err != nil {
			t.Errorf("%s: got %q, %v; want no receipt", name, got, err)
		}
	}
}

// TestReplicasAgree: two services over one store share the first one's
// key and give the same receipt for the same approval.
func TestReplicasAgree(t *testing.T) {
	clk := &clock{approvedAt}
	store := openStore(t)
	a, b := newService(t, store, clk), newService(t, store, clk)
	ta, err := a.IssueReceipt(approved(""))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.IssueReceipt(approved(""))
	if err != nil {
		t.Fatal(err)
	}
	if ta != tb {
		t.Errorf("replicas' receipts differ:\n%s\n%s", ta, tb)
	}
}

func TestRotate(t *testing.T) {
	clk := &clock{approvedAt}
	store := openStore(t)
	s := newService(t, store, clk)
	old, err := s.IssueReceipt(approved(""))
	if err != nil {
		t.Fatal(err)
	}
	oldKID := kid(t, old)
	newKID, err := s.Rotate(t.Context())
	if err != nil {
		t.Fatalf("Rotate: %v", err)
	}
	if newKID == oldKID {
		t.Fatalf("Rotate kept kid %s", oldKID)
	}
	fresh, err := s.IssueReceipt(approved(""))
	if err != nil {
		t.Fatal(err)
	}
	if got := kid(t, fresh); got != newKID {
		t.Errorf("after Rotate, signed with %s; want %s", got, newKID)
	}
	set, err := s.KeySet(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := kids(set); got != oldKID+","+newKID && got != newKID+","+oldKID {
		t.Errorf("JWKS after rotation: got %s; want both keys", got)
	}
	if _, err := s.Verify(t.Context(), old, hitl.ReceiptExpectation{}); err != nil {
		t.Errorf("an unexpired receipt of the rotated key: %v; want valid", err)
	}
	// Once its receipts have expired, the old key is no longer published.
	clk.t = approvedAt.Add(2 * time.Hour)
	set, err = s.KeySet(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := kids(set); got != newKID {
		t.Errorf("JWKS after the old key's receipts expired: got %s; want %s", got, newKID)
	}
	_, err = receipt.Verify(old, set, hitl.ReceiptExpectation{}, approvedAt)
	if err == nil || !strings.Contains(hitl.ErrorMessage(err), "not published (rotated out") {
		t.Errorf("a receipt of a key rotated out: got %v; want not published", err)
	}
}

func kid(t *testing.T, token string) string {
	t.Helper()
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{receipt.Algorithm})
	if err != nil {
		t.Fatal(err)
	}
	return jws.Signatures[0].Header.KeyID
}

func kids(set jose.JSONWebKeySet) string {
	var out []string
	for _, k := range set.Keys {
		out = append(out, k.KeyID)
	}
	return strings.Join(out, ",")
}
