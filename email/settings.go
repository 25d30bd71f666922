package email

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hitl-sh/hitl"
)

// Sealed fields' names, bound into their ciphertexts.
const (
	fieldSMTPURL = "smtp_url"
	fieldLinkKey = "link_key"
)

// requireAdmin refuses everyone but admins (and trusted in-process code).
func requireAdmin(ctx context.Context) error {
	c := hitl.CallerFrom(ctx)
	if c.Role != hitl.RoleAdmin && c.Role != "" {
		return hitl.Errorf(hitl.EFORBIDDEN, "only admins may see or change the email configuration")
	}
	return nil
}

// readStored returns the stored configuration; the defaults when none was
// saved.
func (s *Service) readStored(ctx context.Context) (stored, error) {
	st := stored{DelaySeconds: DefaultDelaySeconds}
	b, err := s.store.ChannelSettings(ctx, hitl.ChannelEmail)
	if errors.Is(err, hitl.ErrNotFound) {
		return st, nil
	} else if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("stored email settings are corrupt: %w", err)
	}
	return st, nil
}

// initLinkKey returns the key that signs links: the stored one, or a new
// one stored sealed (the first replica's wins). Without a cipher it is
// made for this process only.
func (s *Service) initLinkKey(ctx context.Context) ([]byte, error) {
	st, err := s.readStored(ctx)
	if err != nil {
		return nil, err
	}
	if s.cipher == nil {
		s.log.Warn("no secret key (HITL_SECRET_KEY or --secret-key-file): email links are signed with a key kept in memory, and stop working when this server restarts; other replicas refuse them")
		return randomKey()
	}
	if st.LinkKey == "" {
		key, err := randomKey()
		if err != nil {
			return nil, err
		}
		if st.LinkKey, err = s.cipher.Seal(fieldLinkKey, base64.StdEncoding.EncodeToString(key)); err != nil {
			return nil, err
		}
		b, err := json.Marshal(st)
		if err != nil {
			return nil, err
		}
		if b, err = s.store.InitChannelSettings(ctx, hitl.ChannelEmail, b); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &st); err != nil {
			return nil, fmt.Errorf("stored email settings are corrupt: %w", err)
		}
		if st.LinkKey == "" { // settings were saved without one, before this
			return s.addLinkKey(ctx)
		}
	}
	plain, err := s.cipher.Open(fieldLinkKey, st.LinkKey)
	if err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(plain)
}

// addLinkKey stores a new link key into settings that have none.
func (s *Service) addLinkKey(ctx context.Context) ([]byte, error) {
	key, err := randomKey()
	if err != nil {
		return nil, err
	}
	st, err := s.readStored(ctx)
	if err != nil {
		return nil, err
	}
	if st.LinkKey, err = s.cipher.Seal(fieldLinkKey, base64.StdEncoding.EncodeToString(key)); err != nil {
		return nil, err
	}
	return key, s.save(ctx, st)
}

func randomKey() ([]byte, error) {
	key := make([]byte, linkKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return key, nil
}

// save stores st.
func (s *Service) save(ctx context.Context, st stored) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return s.store.SaveChannelSettings(ctx, hitl.ChannelEmail, b)
}

// storedConfig reads the stored configuration with its SMTP URL opened.
func (s *Service) storedConfig(ctx context.Context) (Config, stored, error) {
	st, err := s.readStored(ctx)
	if err != nil {
		return Config{}, st, err
	}
	c := Config{Enabled: st.Enabled, From: st.From, DelaySeconds: st.DelaySeconds, DefaultRecipients: st.DefaultRecipients}
	if st.SMTPURL != "" {
		if s.cipher == nil {
			return c, st, hitl.Errorf(hitl.EINVALID, "the stored SMTP URL cannot be read without the secret key (HITL_SECRET_KEY)")
		}
		if c.SMTPURL, err = s.cipher.Open(fieldSMTPURL, st.SMTPURL); err != nil {
			return c, st, err
		}
	}
	return c, st, nil
}

// effective returns the stored configuration with the environment's over
// it.
func (s *Service) effective(ctx context.Context) (Config, error) {
	c, _, err := s.storedConfig(ctx)
	if err != nil {
		return Config{}, err
	}
	return s.env.over(c), nil
}

// view masks c for the API.
func (s *Service) view(c Config) ConfigView {
	rs := c.DefaultRecipients
	if rs == nil {
		rs = []string{}
	}
	return ConfigView{
		Enabled: c.Enabled, SMTPURL: redactURL(c.SMTPURL), From: c.From, DelaySeconds: c.DelaySeconds,
		DefaultRecipients: rs, FromEnvironment: s.env.fromEnv(),
	}
}

// Config returns the configuration in effect, masked. Admins only.
func (s *Service) Config(ctx context.Context) (ConfigView, error) {
	if err := requireAdmin(ctx); err != nil {
		return ConfigView{}, err
	}
	c, err := s.effective(ctx)
	if err != nil {
		return ConfigView{}, err
	}
	return s.view(c), nil
}

// apply lays u over c; a field the environment sets may not change.
func (s *Service) apply(c Config, u ConfigUpdate) (Config, error) {
	env := s.env
	locked := func(name string, set bool) error {
		if set {
			return hitl.Errorf(hitl.EINVALID, "%s is set by %s and cannot be changed here", name, envNames[name])
		}
		return nil
	}
	if u.Enabled != nil {
		if err := locked("enabled", env.Enabled != nil && *env.Enabled != *u.Enabled); err != nil {
			return c, err
		}
		c.Enabled = *u.Enabled
	}
	if u.SMTPURL != nil {
		next := unredactURL(*u.SMTPURL, c.SMTPURL)
		if err := locked("smtp_url", env.SMTPURL != "" && next != env.SMTPURL); err != nil {
			return c, err
		}
		c.SMTPURL = next
	}
	if u.From != nil {
		if err := locked("from", env.From != "" && *u.From != env.From); err != nil {
			return c, err
		}
		c.From = *u.From
	}
	if u.DelaySeconds != nil {
		if err := locked("delay_seconds", env.DelaySeconds != nil && *u.DelaySeconds != *env.DelaySeconds); err != nil {
			return c, err
		}
		c.DelaySeconds = *u.DelaySeconds
	}
	if u.DefaultRecipients != nil {
		if err := locked("default_recipients", env.DefaultRecipients != nil); err != nil {
			return c, err
		}
		c.DefaultRecipients = cleanRecipients(*u.DefaultRecipients)
	}
	return c, c.validate()
}

// SetConfig changes the stored configuration and applies it at once.
// Fields left out keep their values. Admins only.
func (s *Service) SetConfig(ctx context.Context, u ConfigUpdate) (ConfigView, error) {
	if err := requireAdmin(ctx); err != nil {
		return ConfigView{}, err
	}
	cur, st, err := s.storedConfig(ctx)
	if err != nil {
		return ConfigView{}, err
	}
	next, err := s.apply(s.env.over(cur), u)
	if err != nil {
		return ConfigView{}, err
	}
	// Store what is not the environment's.
	st.Enabled, st.From, st.DelaySeconds, st.DefaultRecipients = next.Enabled, next.From, next.DelaySeconds, next.DefaultRecipients
	if s.env.Enabled != nil {
		st.Enabled = cur.Enabled
	}
	if s.env.From != "" {
		st.From = cur.From
	}
	if s.env.DelaySeconds != nil {
		st.DelaySeconds = cur.DelaySeconds
	}
	if s.env.DefaultRecipients != nil {
		st.DefaultRecipients = cur.DefaultRecipients
	}
	if s.env.SMTPURL == "" && next.SMTPURL != cur.SMTPURL {
		if next.SMTPURL != "" && s.cipher == nil {
			return ConfigView{}, hitl.Errorf(hitl.EINVALID, "the SMTP URL cannot be saved without a secret key: set HITL_SECRET_KEY, or give it as HITL_SMTP_URL")
		}
		if st.SMTPURL, err = s.seal(fieldSMTPURL, next.SMTPURL); err != nil {
			return ConfigView{}, err
		}
	}
	if err := s.save(ctx, st); err != nil {
		return ConfigView{}, err
	}
	s.mu.Lock()
	was := s.cfg.usable()
	s.cfg, s.loadedAt = next, s.now()
	s.mu.Unlock()
	if next.usable() && !was {
		s.intake.Sweep()
	}
	s.intake.Wake()
	s.log.Info("email configuration changed", "by", hitl.CallerFrom(ctx).Name, "enabled", next.Enabled)
	return s.view(next), nil
}

func (s *Service) seal(field, value string) (string, error) {
	if value == "" {
		return "", nil
	}
	if s.cipher == nil {
		return "", errNoCipher
	}
	return s.cipher.Seal(field, value)
}

// reload reads the stored configuration again now and then, so that a
// change saved through another replica takes effect here too.
func (s *Service) reload(ctx context.Context) {
	s.mu.Lock()
	stale := s.now().Sub(s.loadedAt) >= configRecheck
	s.mu.Unlock()
	if !stale {
		return
	}
	cfg, err := s.effective(ctx)
	if err == nil {
		err = cfg.validate()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loadedAt = s.now()
	if err != nil {
		s.log.Error("read email configuration", "error", hitl.ErrorMessage(err))
		return
	}
	if cfg.usable() && !s.cfg.usable() {
		s.intake.Sweep()
	}
	s.cfg = cfg
}

// Test sends a test mail to the caller's own address, or to the first
// default recipient, with the saved settings or the ones in u laid over
// them (unsaved). Admins only.
func (s *Service) Test(ctx context.Context, u *ConfigUpdate, to string) (TestResult, error) {
	if err := requireAdmin(ctx); err != nil {
		return TestResult{}, err
	}
	cfg, err := s.effective(ctx)
	if err != nil {
		return TestResult{}, err
	}
	if u != nil {
		if cfg, err = s.apply(cfg, *u); err != nil {
			return TestResult{}, err
		}
	}
	if cfg.SMTPURL == "" || cfg.From == "" {
		return TestResult{Message: "Set the SMTP URL and the From address first."}, nil
	}
	if to == "" {
		to = s.testRecipient(ctx, cfg)
	}
	if to == "" {
		return TestResult{Message: "Nowhere to send a test mail: give your account an email address (hitl user add --email) or add a default recipient."}, nil
	}
	snd, err := newSender(cfg, s.tls)
	if err != nil {
		return TestResult{}, err
	}
	msg := &message{
		to: to, subject: "[hitl] Test mail",
		text: "This is a test mail from hitl. Email notifications are set up: questions will reach you here.\n",
		html: "<p>This is a test mail from hitl. Email notifications are set up: questions will reach you here.</p>",
	}
	if err := snd.send(ctx, msg); err != nil {
		s.log.Warn("email test failed", "error", err)
		return TestResult{Message: "Could not send the test mail: " + err.Error()}, nil
	}
	return TestResult{Success: true, Message: "Test mail sent to " + to + "."}, nil
}

// testRecipient is the caller's own address, else the first default one.
func (s *Service) testRecipient(ctx context.Context, cfg Config) string {
	if s.ids != nil {
		if u, err := s.ids.User(ctx, hitl.CallerFrom(ctx).Name); err == nil && u.Email != "" {
			return u.Email
		}
	}
	if len(cfg.DefaultRecipients) > 0 {
		return cfg.DefaultRecipients[0]
	}
	return ""
}
