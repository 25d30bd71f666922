// Package auth holds hitl's credentials: password hashes (argon2id, from
// golang.org/x/crypto), API tokens and session secrets. Secrets are shown
// once and stored only as hashes.
package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters for new hashes (OWASP's recommendation: 19 MiB, two
// passes, one lane). Each hash records its own parameters, so they can
// grow without invalidating existing passwords.
const (
	argonMemory  = 19 * 1024 // KiB
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// MinPasswordLen is the shortest password HashPassword accepts.
const MinPasswordLen = 8

// maxPasswordLen bounds what is hashed, so a huge body cannot make a
// login expensive.
const maxPasswordLen = 1024

// ErrBadHash is returned for a stored hash this package cannot read.
var ErrBadHash = errors.New("auth: unrecognised password hash")

// HashPassword returns the argon2id hash of password in the PHC string
// format ($argon2id$v=19$m=…,t=…,p=…$salt$hash).
func HashPassword(password string) (string, error) {
	if len(password) < MinPasswordLen {
		return "", fmt.Errorf("password must be at least %d characters", MinPasswordLen)
	}
	if len(password) > maxPasswordLen {
		return "", fmt.Errorf("password is limited to %d bytes", maxPasswordLen)
	}
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// CheckPassword reports whether password matches hash, comparing in
// constant time. It returns ErrBadHash for a hash it cannot read.
func CheckPassword(hash, password string) (bool, error) {
	p, err := parseHash(hash)
	if err != nil {
		return false, err
	}
	if len(password) > maxPasswordLen {
		password = password[:maxPasswordLen] // still hashed, so the time taken says nothing
	}
	key := argon2.IDKey([]byte(password), p.salt, p.time, p.memory, p.threads, uint32(len(p.key)))
	return subtle.ConstantTimeCompare(key, p.key) == 1, nil
}

// params are a parsed argon2id hash.
type params struct {
	memory, time uint32
	threads      uint8
	salt, key    []byte
}

func parseHash(hash string) (params, error) {
	var p params
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return p, ErrBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return p, ErrBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.time, &p.threads); err != nil {
		return p, ErrBadHash
	}
	// Refuse parameters that would make one check take a gigabyte or
	// forever: a stored hash is trusted, but not that much.
	if p.memory < 8 || p.memory > 1<<20 || p.time < 1 || p.time > 16 || p.threads < 1 {
		return p, ErrBadHash
	}
	var err error
	b64 := base64.RawStdEncoding
	if p.salt, err = b64.DecodeString(parts[4]); err != nil || len(p.salt) < 8 {
		return p, ErrBadHash
	}
	if p.key, err = b64.DecodeString(parts[5]); err != nil || len(p.key) < 16 || len(p.key) > 64 {
		return p, ErrBadHash
	}
	return p, nil
}
