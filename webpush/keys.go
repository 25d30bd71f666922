package webpush

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/hitl-sh/hitl"
)

// fieldVAPIDKey names the sealed private key in the channel's settings.
const fieldVAPIDKey = "vapid_private_key"

// vapidKeys is the server's VAPID key pair (P-256), base64url without
// padding: the private scalar (32 bytes) and the uncompressed public point
// (65 bytes), the forms the Push API and webpush-go take.
type vapidKeys struct {
	private string
	public  string
}

// storedKeys is the channel's settings as the store keeps them, the
// private key sealed.
type storedKeys struct {
	PublicKey  string `json:"vapid_public_key"`
	PrivateKey string `json:"vapid_private_key"` // sealed
}

// newVAPIDKeys makes a key pair.
func newVAPIDKeys() (vapidKeys, error) {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return vapidKeys{}, fmt.Errorf("make VAPID keys: %w", err)
	}
	return vapidKeys{
		private: base64.RawURLEncoding.EncodeToString(k.Bytes()),
		public:  base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()),
	}, nil
}

// initKeys returns the stored key pair, or a new one stored sealed (the
// first replica's wins). Without a cipher it is made for this process
// only.
func (s *Service) initKeys(ctx context.Context) (vapidKeys, error) {
	if s.cipher == nil {
		s.log.Warn("no secret key (HITL_SECRET_KEY or --secret-key-file): the Web Push keys are kept in memory, and browsers' subscriptions stop working when this server restarts")
		return newVAPIDKeys()
	}
	k, err := newVAPIDKeys()
	if err != nil {
		return vapidKeys{}, err
	}
	sealed, err := s.cipher.Seal(fieldVAPIDKey, k.private)
	if err != nil {
		return vapidKeys{}, err
	}
	b, err := json.Marshal(storedKeys{PublicKey: k.public, PrivateKey: sealed})
	if err != nil {
		return vapidKeys{}, err
	}
	if b, err = s.store.InitChannelSettings(ctx, hitl.ChannelPush, b); err != nil {
		return vapidKeys{}, fmt.Errorf("store the Web Push keys: %w", err)
	}
	var st storedKeys
	if err := json.Unmarshal(b, &st); err != nil || st.PublicKey == "" || st.PrivateKey == "" {
		return vapidKeys{}, fmt.Errorf("the stored Web Push settings are corrupt")
	}
	private, err := s.cipher.Open(fieldVAPIDKey, st.PrivateKey)
	if err != nil {
		return vapidKeys{}, fmt.Errorf("open the stored Web Push key: %w", err)
	}
	return vapidKeys{private: private, public: st.PublicKey}, nil
}

// PublicKey returns the server's VAPID public key (base64url), which
// browsers subscribe with (pushManager.subscribe's applicationServerKey).
func (s *Service) PublicKey() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys.public
}

// CheckSubject reports why sub cannot be the VAPID subject: it must be a
// mailto: address or an https URL.
func CheckSubject(sub string) error {
	u, err := url.Parse(sub)
	switch {
	case err != nil:
	case u.Scheme == "mailto" && strings.Contains(u.Opaque, "@"):
		return nil
	case u.Scheme == "https" && u.Host != "":
		return nil
	}
	return hitl.Errorf(hitl.EINVALID, "the VAPID subject must be a mailto: address or an https URL, such as mailto:ops@example.com; got %q", sub)
}
