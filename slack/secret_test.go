package slack

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestCipher(t *testing.T) {
	c, err := NewCipher(testKey)
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Seal("bot_token", testBotToken)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Seal("bot_token", testBotToken)
	if a == b {
		t.Errorf("two seals of one value are equal: the nonce is not random")
	}
	if got, err := c.Open("bot_token", a); err != nil || got != testBotToken {
		t.Errorf("Open: got %q, %v", got, err)
	}
	if _, err := c.Open("app_token", a); err == nil {
		t.Errorf("a value sealed for bot_token opened as app_token")
	}
	tampered := a[:len(a)-2] + "AA"
	if _, err := c.Open("bot_token", tampered); err == nil {
		t.Errorf("an altered value opened")
	}
	if s, _ := c.Seal("bot_token", ""); s != "" {
		t.Errorf("Seal of empty: got %q, want empty", s)
	}
	if _, err := NewCipher([]byte("short")); err == nil {
		t.Errorf("NewCipher accepted a 5-byte key")
	}
}

func TestParseKey(t *testing.T) {
	key := bytes.Repeat([]byte{0xfb}, KeySize)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		got, err := ParseKey(" " + enc.EncodeToString(key) + "\n")
		if err != nil || !bytes.Equal(got, key) {
			t.Errorf("ParseKey(%T): got %x, %v", enc, got, err)
		}
	}
	if _, err := ParseKey(base64.StdEncoding.EncodeToString(key[:16])); err == nil || !strings.Contains(err.Error(), "32 bytes") {
		t.Errorf("16-byte key: got %v, want an error about 32 bytes", err)
	}
	if _, err := ParseKey("not base64!"); err == nil {
		t.Errorf("ParseKey accepted garbage")
	}
}

func TestLoadKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hitl.db.key")
	if _, err := LoadKeyFile(path, false); err == nil {
		t.Fatalf("a missing key file without create: got no error")
	}
	// Several processes starting at once agree on one key.
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := LoadKeyFile(path, true)
			if err != nil {
				t.Errorf("LoadKeyFile: %v", err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if !bytes.Equal(k, keys[0]) || len(k) != KeySize {
			t.Fatalf("concurrent creation: keys differ")
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("key file mode: got %04o, want 0600", got)
	}
	again, err := LoadKeyFile(path, true)
	if err != nil || !bytes.Equal(again, keys[0]) {
		t.Errorf("reading the key file again: got %x, %v", again, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKeyFile(path, true); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a key file others may read: got %v, want it refused", err)
	}
}
