// Package secret seals the secrets hitl keeps in its database (Slack
// tokens, the SMTP password, email link and Web Push keys) with AES-256-GCM
// under one key, and loads that key.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the size of the key that seals secrets at rest: AES-256.
const KeySize = 32

// sealedPrefix marks a sealed value and its format version.
const sealedPrefix = "v1:"

// Cipher seals one channel's secrets before they are stored, with
// AES-256-GCM. Each value gets a random nonce, and the channel's and its
// field's names as additional data, so a sealed value cannot be moved to
// another field or channel.
type Cipher struct {
	aead  cipher.AEAD
	scope string
}

// NewCipher returns a Cipher with a 32-byte key for the secrets of scope
// (a channel: "slack", "email", "push").
func NewCipher(key []byte, scope string) (*Cipher, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret key must be %d bytes; got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Cipher{aead: aead, scope: scope}, nil
}

// Seal encrypts the value of field; "" stays "".
func (c *Cipher) Seal(field, value string) (string, error) {
	if value == "" {
		return "", nil
	}
	nonce := make([]byte, c.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := c.aead.Seal(nonce, nonce, []byte(value), c.additional(field))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(out), nil
}

// Open decrypts a value Seal made for field; "" stays "".
func (c *Cipher) Open(field, sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	rest, ok := strings.CutPrefix(sealed, sealedPrefix)
	if !ok {
		return "", fmt.Errorf("stored %s is not sealed in a format this build knows", field)
	}
	b, err := base64.RawStdEncoding.DecodeString(rest)
	n := c.aead.NonceSize()
	if err != nil || len(b) < n {
		return "", fmt.Errorf("stored %s is corrupt", field)
	}
	plain, err := c.aead.Open(nil, b[:n], b[n:], c.additional(field))
	if err != nil {
		return "", fmt.Errorf("stored %s cannot be decrypted: the secret key changed, or the value was altered", field)
	}
	return string(plain), nil
}

func (c *Cipher) additional(field string) []byte {
	return []byte("hitl " + c.scope + " " + field)
}

// Scope returns a Cipher with the same key for the secrets of another
// scope.
func (c *Cipher) Scope(scope string) *Cipher {
	return &Cipher{aead: c.aead, scope: scope}
}

// ParseKey decodes a key given as base64 (standard or URL alphabet, with
// or without padding), as HITL_SECRET_KEY holds it.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != KeySize {
				return nil, fmt.Errorf("secret key must be %d bytes of base64 (openssl rand -base64 32); got %d bytes", KeySize, len(b))
			}
			return b, nil
		}
	}
	return nil, errors.New("secret key is not base64 (make one with: openssl rand -base64 32)")
}

// LoadKeyFile reads the base64 key in the file at path. When the file does
// not exist and create is true, it makes a new random key there, readable
// by its owner only (mode 0600). A key file that others may read is
// refused.
func LoadKeyFile(path string, create bool) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		return createKeyFile(path)
	} else if err != nil {
		return nil, fmt.Errorf("read secret key file: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read secret key file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("secret key file %s may be read by others (mode %04o); chmod 600 it", path, fi.Mode().Perm())
	}
	key, err := ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("secret key file %s: %w", path, err)
	}
	return key, nil
}

// createKeyFile writes a new random key to path. The key is written to a
// temporary file first and linked into place, so a process starting at the
// same moment reads either no file or a whole key; if one beat it to it,
// that key wins.
func createKeyFile(path string) ([]byte, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".hitl-key-*")
	if err != nil {
		return nil, fmt.Errorf("create secret key file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write secret key file: %w", err)
	}
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		return LoadKeyFile(path, false)
	} else if err != nil {
		return nil, fmt.Errorf("create secret key file: %w", err)
	}
	return key, nil
}
