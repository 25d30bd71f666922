package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestReceipts: through the real binary, an approved action carries a
// receipt that client.VerifyReceipt, hitl receipt verify and POST
// /api/v1/receipts/verify accept for its call and refuse, with a reason,
// for another; the same receipt after a restart; rotation keeps it valid.
func TestReceipts(t *testing.T) {
	turns.Parallel(t)
	addr, db := freeAddr(t), t.TempDir()+"/hitl.db"
	srv := startServerAt(t, addr, db)
	c := srv.client(t)
	ctx := context.Background()
	args := json.RawMessage(`{"command":"ls","cwd":"/tmp"}`)
	in, _, err := c.Create(ctx, hitl.CreateRequest{Type: hitl.TypeAction, SourceAgent: "claude-code",
		Action: &hitl.Action{Name: "Bash", Args: args}})
	if err != nil {
		t.Fatal(err)
	}
	if in.Result != nil {
		t.Fatalf("pending action has a result: %+v", in.Result)
	}
	if _, err := c.Respond(ctx, in.ID, json.RawMessage(`{"decision":"approve"}`)); err != nil {
		t.Fatal(err)
	}
	got, err := c.Wait(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	token := got.Result.Receipt
	if token == "" {
		t.Fatalf("approved action without a receipt: %+v", got.Result)
	}

	claims, err := c.VerifyReceipt(ctx, token, hitl.ReceiptExpectation{InteractionID: in.ID, Name: "Bash", Args: json.RawMessage(`{"cwd":"/tmp","command":"ls"}`)})
	if err != nil {
		t.Fatalf("VerifyReceipt: %v", err)
	}
	if claims.Agent != "claude-code" || claims.Issuer != srv.URL {
		t.Errorf("claims: %+v", claims)
	}
	if _, err := c.VerifyReceipt(ctx, token, hitl.ReceiptExpectation{Args: json.RawMessage(`{"command":"rm -rf /","cwd":"/tmp"}`)}); err == nil || !strings.Contains(err.Error(), "other args") {
		t.Errorf("VerifyReceipt, other args: %v; want other args", err)
	}

	// The CLI, against the server's keys.
	if out, stderr, code := hitlRun(t, "receipt", "verify", "--server", srv.URL, "--name", "Bash", "--args", string(args), token); code != 0 || !strings.Contains(out, `"sub": "`+in.ID+`"`) {
		t.Errorf("hitl receipt verify: exit %d\n%s%s", code, out, stderr)
	}
	if _, stderr, code := hitlRun(t, "receipt", "verify", "--server", srv.URL, "--name", "Write", token); code != exitInvalidReceipt || !strings.Contains(stderr, `for tool "Bash", not "Write"`) {
		t.Errorf("hitl receipt verify, another tool: exit %d, %s; want %d and the reason", code, stderr, exitInvalidReceipt)
	}

	// The HTTP endpoint, for anything else.
	if v := verifyOverHTTP(t, srv.URL, map[string]any{"receipt": token, "args": args}); !v.Valid || v.Claims == nil || v.Claims.InteractionID != in.ID {
		t.Errorf("POST /api/v1/receipts/verify: %+v; want valid", v)
	}
	forged := token[:strings.LastIndex(token, ".")+1] + strings.Repeat("A", 86)
	if v := verifyOverHTTP(t, srv.URL, map[string]any{"receipt": forged}); v.Valid || !strings.Contains(v.Reason, "signature does not verify") {
		t.Errorf("forged: %+v; want invalid, with why", v)
	}

	// The same receipt after a restart: the key is stored sealed.
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.wait(t)
	srv = startServerAt(t, addr, db)
	c = srv.client(t)
	again, err := c.Get(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Result.Receipt != token {
		t.Errorf("receipt after a restart differs:\n%s\n%s", again.Result.Receipt, token)
	}

	// Rotation: new receipts use the new key; the old one still verifies.
	kid, stderr, code := hitlRun(t, "receipt", "rotate-key", "--server", srv.URL)
	if code != 0 || strings.TrimSpace(kid) == "" {
		t.Fatalf("hitl receipt rotate-key: exit %d, %s", code, stderr)
	}
	if _, err := c.VerifyReceipt(ctx, token, hitl.ReceiptExpectation{Args: args}); err != nil {
		t.Errorf("the old key's receipt after rotation: %v; want valid", err)
	}
	rotated, err := c.Get(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Result.Receipt == token || !strings.Contains(headerOf(t, rotated.Result.Receipt), strings.TrimSpace(kid)) {
		t.Errorf("after rotation the receipt is not signed with the new key %s", kid)
	}
}

// verifyResult is POST /api/v1/receipts/verify's answer.
type verifyResult struct {
	Valid  bool                `json:"valid"`
	Reason string              `json:"reason"`
	Claims *hitl.ReceiptClaims `json:"claims"`
}

func verifyOverHTTP(t *testing.T, base string, body any) verifyResult {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(base+"/api/v1/receipts/verify", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v verifyResult
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&v) != nil {
		t.Fatalf("POST /api/v1/receipts/verify: %s", resp.Status)
	}
	return v
}

// headerOf returns a compact JWS's decoded protected header.
func headerOf(t *testing.T, token string) string {
	t.Helper()
	h, _, _ := strings.Cut(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
