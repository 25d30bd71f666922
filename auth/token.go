package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// TokenPrefix starts every API token, so one that leaks is easy to
// recognise (and to scan for).
const TokenPrefix = "hitl_"

// tokenChars is how many base62 characters follow the prefix: about 238
// bits of randomness.
const tokenChars = 40

// displayLen is how much of a token is kept for display: the prefix and
// seven characters.
const displayLen = len(TokenPrefix) + 7

const (
	base62     = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	lowerAlnum = "0123456789abcdefghijklmnopqrstuvwxyz"
)

// NewToken returns a new API token (hitl_ and 40 base62 characters), the
// SHA-256 to store, and the short prefix to display.
func NewToken() (secret string, hash []byte, display string) {
	secret = TokenPrefix + randomString(base62, tokenChars)
	return secret, HashSecret(secret), secret[:displayLen]
}

// LooksLikeToken reports whether s has the form of an API token, so that
// anything else is refused without a lookup.
func LooksLikeToken(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok || len(rest) != tokenChars {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if strings.IndexByte(base62, rest[i]) < 0 {
			return false
		}
	}
	return true
}

// NewSessionSecret returns a new browser session secret (32 random bytes,
// base64url) and the SHA-256 to store.
func NewSessionSecret() (secret string, hash []byte) {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics instead)
	secret = base64.RawURLEncoding.EncodeToString(b)
	return secret, HashSecret(secret)
}

// NewID returns a short random identifier for a token: 10 lowercase
// letters and digits.
func NewID() string {
	return randomString(lowerAlnum, 10)
}

// HashSecret returns the SHA-256 of a token or session secret. Secrets
// are long and random, so a fast hash is enough: the stored hash cannot be
// turned back into a usable secret.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// randomString returns n characters drawn uniformly from alphabet.
func randomString(alphabet string, n int) string {
	// Bytes at or above limit (a multiple of the alphabet's size) are
	// dropped, so that every character is equally likely.
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	buf := make([]byte, n*2)
	for len(out) < n {
		rand.Read(buf) // never fails (crypto/rand panics instead)
		for _, c := range buf {
			if int(c) < limit && len(out) < n {
				out = append(out, alphabet[int(c)%len(alphabet)])
			}
		}
	}
	return string(out)
}

// EmbedTokenPrefix starts every embed token (the short-lived credential of
// the <hitl-prompt> element), so it is told from an API token at a glance.
const EmbedTokenPrefix = "hitl_embed_"

// NewEmbedToken returns a new embed token (hitl_embed_ and 40 base62
// characters), the SHA-256 to store, and the short prefix to display.
func NewEmbedToken() (secret string, hash []byte, display string) {
	secret = EmbedTokenPrefix + randomString(base62, tokenChars)
	return secret, HashSecret(secret), secret[:len(EmbedTokenPrefix)+4]
}

// LooksLikeEmbedToken reports whether s has the form of an embed token.
func LooksLikeEmbedToken(s string) bool {
	rest, ok := strings.CutPrefix(s, EmbedTokenPrefix)
	if !ok || len(rest) != tokenChars {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if strings.IndexByte(base62, rest[i]) < 0 {
			return false
		}
	}
	return true
}
