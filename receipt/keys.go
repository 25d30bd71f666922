package receipt

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// fieldPrivateKey names a sealed private key in the stored settings.
const fieldPrivateKey = "private_key"

// storedKeys is the receipt settings as the store keeps them: newest key
// first, private keys sealed.
type storedKeys struct {
	Keys []storedKey `json:"keys"`
}

// storedKey is one signing key. A retired key signs nothing more; its
// public half stays published while receipts it signed may be unexpired.
type storedKey struct {
	KID       string     `json:"kid"`
	Public    string     `json:"public_key"`            // base64url, 32 bytes
	Private   string     `json:"private_key,omitempty"` // sealed seed; dropped when retired
	CreatedAt time.Time  `json:"created_at"`
	RetiredAt *time.Time `json:"retired_at,omitempty"`
}

// key is a key ready to use.
type key struct {
	kid       string
	public    ed25519.PublicKey
	private   ed25519.PrivateKey // nil once retired
	retiredAt time.Time          // zero while current
}

// newKey makes an Ed25519 key pair; its kid is its RFC 7638 thumbprint.
func newKey() (key, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return key{}, fmt.Errorf("make receipt key: %w", err)
	}
	kid, err := thumbprint(pub)
	if err != nil {
		return key{}, err
	}
	return key{kid: kid, public: pub, private: priv}, nil
}

// thumbprint is the RFC 7638 SHA-256 thumbprint of pub, base64url.
func thumbprint(pub ed25519.PublicKey) (string, error) {
	jwk := jose.JSONWebKey{Key: pub}
	t, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("receipt key thumbprint: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(t), nil
}

// jwk is k's public half as published.
func (k key) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.public, KeyID: k.kid, Algorithm: string(Algorithm), Use: "sig"}
}
