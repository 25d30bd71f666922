package slack

import "github.com/hitl-sh/hitl/secret"

// KeySize is the size of the key that seals secrets at rest: AES-256.
const KeySize = secret.KeySize

// Cipher seals the Slack secrets (tokens, signing secret) before they are
// stored (see secret.Cipher).
type Cipher = secret.Cipher

// NewCipher returns a Cipher for Slack's secrets with a 32-byte key.
func NewCipher(key []byte) (*Cipher, error) {
	return secret.NewCipher(key, "slack")
}

// ParseKey decodes a key given as base64, as HITL_SECRET_KEY holds it.
func ParseKey(s string) ([]byte, error) { return secret.ParseKey(s) }

// LoadKeyFile reads the base64 key in the file at path, making it when
// create is true and it does not exist (see secret.LoadKeyFile).
func LoadKeyFile(path string, create bool) ([]byte, error) { return secret.LoadKeyFile(path, create) }
