package client

import (
	"context"
	"net/http"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/receipt"
)

// KeySet returns the public keys the server's receipts verify with
// (GET /.well-known/jwks.json).
func (c *Client) KeySet(ctx context.Context) (jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	_, err := c.do(ctx, http.MethodGet, "/.well-known/jwks.json", nil, &set)
	return set, err
}

// VerifyReceipt checks token, an approved action's receipt
// (result.receipt), here: its signature against the server's published
// keys, its expiry, and that it stands for the call expect describes
// (empty fields are not checked). It returns the receipt's claims; an
// error with code EINVALID says why the receipt does not hold.
func (c *Client) VerifyReceipt(ctx context.Context, token string, expect hitl.ReceiptExpectation) (hitl.ReceiptClaims, error) {
	set, err := c.KeySet(ctx)
	if err != nil {
		return hitl.ReceiptClaims{}, err
	}
	return receipt.Verify(token, set, expect, time.Now())
}

// RotateReceiptKey makes the server sign receipts with a new key (admins)
// and returns its id; the old key stays published until its receipts
// have expired.
func (c *Client) RotateReceiptKey(ctx context.Context) (string, error) {
	var out struct {
		KID string `json:"kid"`
	}
	_, err := c.do(ctx, http.MethodPost, "/api/v1/receipts/keys/rotate", struct{}{}, &out)
	return out.KID, err
}
