package receipt

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/secret"
)

// refreshEvery is how often a service reads the keys again, so that a
// key rotated on another replica is used and published here too.
const refreshEvery = time.Minute

// retiredGrace is how long past a receipt's lifetime a retired key stays
// published: a replica may sign with it until its next refresh.
const retiredGrace = 2 * refreshEvery

// Options configure a Service. Nil options mean defaults.
type Options struct {
	// Cipher seals the private keys in the store; nil keeps one key in
	// memory (receipts stop verifying when the server restarts).
	Cipher *secret.Cipher
	// Issuer is the receipts' iss claim: the server's public URL.
	Issuer string
	// TTL is how long a receipt is valid from its approval; 0 means
	// hitl.DefaultReceiptTTL.
	TTL time.Duration
	// Logger receives operational logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service signs receipts with the server's current key and publishes the
// public keys of every key whose receipts may be unexpired. Keys are
// stored once for all replicas (the first replica's wins), sealed.
type Service struct {
	store  hitl.NotificationStore
	cipher *secret.Cipher
	issuer string
	ttl    time.Duration
	log    *slog.Logger
	now    func() time.Time

	mu   sync.Mutex
	keys []key // current first
}

var _ hitl.ReceiptIssuer = (*Service)(nil)

// New returns a service over store. Call Start before use.
func New(store hitl.NotificationStore, opts *Options) *Service {
	if opts == nil {
		opts = &Options{}
	}
	s := &Service{store: store, cipher: opts.Cipher, issuer: opts.Issuer, ttl: opts.TTL, log: opts.Logger, now: opts.Now}
	if s.ttl <= 0 {
		s.ttl = hitl.DefaultReceiptTTL
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// TTL is how long a receipt is valid from its approval.
func (s *Service) TTL() time.Duration { return s.ttl }

// Start loads the keys, making the first one if there is none, and reads
// them again every minute until ctx ends.
func (s *Service) Start(ctx context.Context) error {
	if s.cipher == nil {
		s.log.Warn("no secret key (HITL_SECRET_KEY or --secret-key-file): receipts are signed with a key kept in memory, and stop verifying when this server restarts; other replicas refuse them")
		k, err := newKey()
		if err != nil {
			return err
		}
		s.set([]key{k})
		return nil
	}
	if err := s.init(ctx); err != nil {
		return err
	}
	go func() {
		t := time.NewTicker(refreshEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := s.load(ctx); err != nil && ctx.Err() == nil {
					s.log.Warn("read receipt keys", "error", err)
				}
			}
		}
	}()
	return nil
}

// init stores a first key unless one is stored, then loads the keys.
func (s *Service) init(ctx context.Context) error {
	k, err := newKey()
	if err != nil {
		return err
	}
	sk, err := s.seal(k)
	if err != nil {
		return err
	}
	b, err := json.Marshal(storedKeys{Keys: []storedKey{sk}})
	if err != nil {
		return err
	}
	if _, err := s.store.InitChannelSettings(ctx, hitl.ChannelReceipt, b); err != nil {
		return fmt.Errorf("store the receipt key: %w", err)
	}
	return s.load(ctx)
}

// load reads the stored keys into memory.
func (s *Service) load(ctx context.Context) error {
	if s.cipher == nil {
		return nil
	}
	st, err := s.read(ctx)
	if err != nil {
		return err
	}
	keys, err := s.open(st)
	if err != nil {
		return err
	}
	s.set(keys)
	return nil
}

// read returns the stored keys.
func (s *Service) read(ctx context.Context) (storedKeys, error) {
	var st storedKeys
	b, err := s.store.ChannelSettings(ctx, hitl.ChannelReceipt)
	if err != nil {
		return st, fmt.Errorf("read receipt keys: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil || len(st.Keys) == 0 {
		return st, errors.New("the stored receipt keys are corrupt")
	}
	return st, nil
}

// open turns stored keys into usable ones: the current one's private
// half opened.
func (s *Service) open(st storedKeys) ([]key, error) {
	out := make([]key, 0, len(st.Keys))
	for i, sk := range st.Keys {
		pub, err := base64.RawURLEncoding.DecodeString(sk.Public)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("the stored receipt key %q is corrupt", sk.KID)
		}
		k := key{kid: sk.KID, public: pub}
		if sk.RetiredAt != nil {
			k.retiredAt = *sk.RetiredAt
		}
		if i == 0 {
			if sk.RetiredAt != nil || sk.Private == "" {
				return nil, errors.New("the stored receipt keys have no current key")
			}
			plain, err := s.cipher.Open(fieldPrivateKey, sk.Private)
			if err != nil {
				return nil, fmt.Errorf("open the stored receipt key: %w", err)
			}
			seed, err := base64.RawURLEncoding.DecodeString(plain)
			if err != nil || len(seed) != ed25519.SeedSize {
				return nil, fmt.Errorf("the stored receipt key %q is corrupt", sk.KID)
			}
			k.private = ed25519.NewKeyFromSeed(seed)
			if !k.private.Public().(ed25519.PublicKey).Equal(k.public) {
				return nil, fmt.Errorf("the stored receipt key %q does not match its public key", sk.KID)
			}
		}
		out = append(out, k)
	}
	return out, nil
}

// seal returns k as stored, its private seed sealed.
func (s *Service) seal(k key) (storedKey, error) {
	sealed, err := s.cipher.Seal(fieldPrivateKey, base64.RawURLEncoding.EncodeToString(k.private.Seed()))
	if err != nil {
		return storedKey{}, err
	}
	return storedKey{KID: k.kid, Public: base64.RawURLEncoding.EncodeToString(k.public), Private: sealed, CreatedAt: s.now().UTC()}, nil
}

func (s *Service) set(keys []key) {
	s.mu.Lock()
	s.keys = keys
	s.mu.Unlock()
}

// current returns the signing key.
func (s *Service) current() (key, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.keys) == 0 || s.keys[0].private == nil {
		return key{}, false
	}
	return s.keys[0], true
}

// IssueReceipt signs the receipt of in, an approved action: valid from
// its approval for the TTL. Ed25519 signatures are deterministic, so
// every replica gives the same receipt for it while the key stays the
// same. "" for anything else.
func (s *Service) IssueReceipt(in *hitl.Interaction) (string, error) {
	c, ok := in.ApprovedAction()
	if !ok {
		return "", nil
	}
	k, ok := s.current()
	if !ok {
		return "", errors.New("issue receipt: no signing key (receipt service not started)")
	}
	c.Issuer = s.issuer
	c.Expiry = time.Unix(c.IssuedAt, 0).Add(s.ttl).Unix()
	payload, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("issue receipt: %w", err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: Algorithm, Key: jose.JSONWebKey{Key: k.private, KeyID: k.kid}},
		(&jose.SignerOptions{}).WithType("hitl-receipt+jwt"))
	if err != nil {
		return "", fmt.Errorf("issue receipt: %w", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("issue receipt: %w", err)
	}
	return jws.CompactSerialize()
}

// KeySet returns the public keys receipts may be verified with: the
// current key and every retired one whose receipts may be unexpired. It
// reads the store first, so a key rotated on another replica is in it.
func (s *Service) KeySet(ctx context.Context) (jose.JSONWebKeySet, error) {
	if err := s.load(ctx); err != nil {
		return jose.JSONWebKeySet{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, k := range s.keys {
		if s.published(k) {
			set.Keys = append(set.Keys, k.jwk())
		}
	}
	return set, nil
}

// published reports whether k's receipts may still be unexpired.
func (s *Service) published(k key) bool {
	return k.retiredAt.IsZero() || s.now().Before(k.retiredAt.Add(s.ttl+retiredGrace))
}

// Verify checks token against the published keys and expect (see the
// package's Verify).
func (s *Service) Verify(ctx context.Context, token string, expect hitl.ReceiptExpectation) (hitl.ReceiptClaims, error) {
	set, err := s.KeySet(ctx)
	if err != nil {
		return hitl.ReceiptClaims{}, err
	}
	return Verify(token, set, expect, s.now())
}

// Rotate makes a new signing key and retires the current one: its public
// key stays published until every receipt it signed has expired, then it
// is dropped. It returns the new key's id.
func (s *Service) Rotate(ctx context.Context) (string, error) {
	if s.cipher == nil {
		return "", hitl.Errorf(hitl.EINVALID, "receipt keys are kept in memory without a secret key (HITL_SECRET_KEY or --secret-key-file); restart the server to change it")
	}
	st, err := s.read(ctx)
	if err != nil {
		return "", err
	}
	k, err := newKey()
	if err != nil {
		return "", err
	}
	sk, err := s.seal(k)
	if err != nil {
		return "", err
	}
	now := s.now().UTC()
	keys := []storedKey{sk}
	for _, old := range st.Keys {
		if old.RetiredAt == nil {
			old.RetiredAt, old.Private = &now, ""
		}
		if now.Before(old.RetiredAt.Add(s.ttl + retiredGrace)) {
			keys = append(keys, old)
		}
	}
	b, err := json.Marshal(storedKeys{Keys: keys})
	if err != nil {
		return "", err
	}
	if err := s.store.SaveChannelSettings(ctx, hitl.ChannelReceipt, b); err != nil {
		return "", fmt.Errorf("store the receipt keys: %w", err)
	}
	if err := s.load(ctx); err != nil {
		return "", err
	}
	s.log.Info("receipt key rotated", "kid", k.kid)
	return k.kid, nil
}
