// Package receipt signs and verifies receipts: compact JWS tokens (EdDSA,
// Ed25519) that bind one approved action to its arguments, so the tool
// that runs it can check that a person or a rule approved exactly this
// call (see hitl.ReceiptClaims and docs/receipts.md).
package receipt

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hitl-sh/hitl"
)

// Algorithm is the only JWS algorithm receipts are signed and accepted
// with.
const Algorithm = jose.EdDSA

// Verify checks token against the public keys in keys and expect at now,
// and returns its claims. Its errors have code EINVALID and a reason a
// person can act on: malformed, unknown key, bad signature, expired,
// another interaction, tool or arguments.
func Verify(token string, keys jose.JSONWebKeySet, expect hitl.ReceiptExpectation, now time.Time) (hitl.ReceiptClaims, error) {
	var c hitl.ReceiptClaims
	if token == "" {
		return c, hitl.Errorf(hitl.EINVALID, "no receipt")
	}
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{Algorithm})
	if err != nil {
		return c, hitl.Errorf(hitl.EINVALID, "receipt is not a compact JWS signed with EdDSA: %v", err)
	}
	if len(jws.Signatures) != 1 {
		return c, hitl.Errorf(hitl.EINVALID, "receipt must have one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	found := keys.Key(kid)
	if kid == "" || len(found) == 0 {
		return c, hitl.Errorf(hitl.EINVALID, "receipt is signed with key %q, which is not published (rotated out, or not this server's)", kid)
	}
	payload, err := jws.Verify(found[0].Public())
	if err != nil {
		return c, hitl.Errorf(hitl.EINVALID, "receipt signature does not verify with key %q: it was forged or altered", kid)
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return c, hitl.Errorf(hitl.EINVALID, "receipt claims are not valid JSON")
	}
	if c.InteractionID == "" || c.ArgsSHA256 == "" || c.Name == "" {
		return c, hitl.Errorf(hitl.EINVALID, "receipt lacks its interaction, tool or arguments")
	}
	return c, c.Check(expect, now)
}

// ParseKeySet reads a JWKS document (GET /.well-known/jwks.json).
func ParseKeySet(b []byte) (jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(b, &set); err != nil {
		return set, fmt.Errorf("read JWKS: %w", err)
	}
	if len(set.Keys) == 0 {
		return set, errors.New("read JWKS: no keys")
	}
	return set, nil
}
