// Package standardwebhooks signs and verifies webhook deliveries as the
// Standard Webhooks specification (https://www.standardwebhooks.com)
// defines them: headers webhook-id, webhook-timestamp and
// webhook-signature, the signature "v1,<base64 HMAC-SHA256 of
// {id}.{timestamp}.{body}>", keyed with the bytes of a "whsec_<base64>"
// secret. hitl signs its webhooks with it; receivers written in Go may
// verify them with it (it imports only the standard library).
package standardwebhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a signed delivery.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts a secret in its text form.
const SecretPrefix = "whsec_"

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock: older deliveries are refused as possible replays.
const DefaultTolerance = 5 * time.Minute

// Errors Verify returns.
var (
	ErrMissingHeaders = errors.New("standardwebhooks: missing webhook-id, webhook-timestamp or webhook-signature header")
	ErrTimestamp      = errors.New("standardwebhooks: timestamp is not a number or too far from now")
	ErrSignature      = errors.New("standardwebhooks: no matching signature")
)

// NewSecret returns a new random secret, "whsec_" and the base64 of 32
// bytes.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// DecodeSecret returns the key bytes of a secret: the base64 after the
// whsec_ prefix (a secret given without the prefix is taken as base64
// too).
func DecodeSecret(secret string) ([]byte, error) {
	s := strings.TrimPrefix(strings.TrimSpace(secret), SecretPrefix)
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("standardwebhooks: secret must be whsec_ followed by base64")
	}
	if len(key) < 16 || len(key) > 64 {
		return nil, fmt.Errorf("standardwebhooks: secret must hold 16 to 64 bytes; it holds %d", len(key))
	}
	return key, nil
}

// Sign returns the webhook-signature header value of one delivery: "v1,"
// and the base64 HMAC-SHA256 of "{id}.{timestamp}.{body}".
func Sign(key []byte, id string, timestamp time.Time, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, id, strconv.FormatInt(timestamp.Unix(), 10), body))
}

func mac(key []byte, id, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// SetHeaders sets the three headers of a delivery signed with key at now.
func SetHeaders(h http.Header, key []byte, id string, now time.Time, body []byte) {
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(HeaderSignature, Sign(key, id, now, body))
}

// Verifier checks deliveries signed with one secret.
type Verifier struct {
	key []byte
	// Tolerance bounds the distance between a delivery's timestamp and
	// Now; 0 means DefaultTolerance.
	Tolerance time.Duration
	// Now is the receiver's clock; nil means time.Now.
	Now func() time.Time
}

// NewVerifier returns a Verifier for secret (whsec_…).
func NewVerifier(secret string) (*Verifier, error) {
	key, err := DecodeSecret(secret)
	if err != nil {
		return nil, err
	}
	return &Verifier{key: key}, nil
}

// Verify checks the delivery whose headers are h and whose raw body is
// body: one of its v1 signatures must match and its timestamp must be
// within the tolerance. Verify the exact bytes received, before parsing.
func (v *Verifier) Verify(h http.Header, body []byte) error {
	id, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return ErrMissingHeaders
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrTimestamp
	}
	now, tol := time.Now, v.Tolerance
	if v.Now != nil {
		now = v.Now
	}
	if tol <= 0 {
		tol = DefaultTolerance
	}
	if d := now().Sub(time.Unix(sec, 0)); d > tol || d < -tol {
		return ErrTimestamp
	}
	want := mac(v.key, id, ts, body)
	for _, sig := range strings.Fields(sigs) {
		version, value, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(value)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrSignature
}

// Verify checks one delivery against secret with the default tolerance
// (see Verifier.Verify).
func Verify(secret string, h http.Header, body []byte) error {
	v, err := NewVerifier(secret)
	if err != nil {
		return err
	}
	return v.Verify(h, body)
}
