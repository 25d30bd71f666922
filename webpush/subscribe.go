package webpush

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/webhook"
)

// maxEndpoint bounds a push endpoint's length (push services' are a few
// hundred bytes).
const maxEndpoint = 2048

// Subscribe keeps the browser subscription r for the caller, replacing
// any with the same endpoint. The endpoint must be an https URL on a
// public address (see Options.AllowPrivate), and the keys the Push API's.
func (s *Service) Subscribe(ctx context.Context, r hitl.PushSubscribeRequest) (*hitl.PushSubscription, error) {
	c := hitl.CallerFrom(ctx)
	if c.Name == "" || c.Role == hitl.RoleAgent {
		return nil, hitl.Errorf(hitl.EFORBIDDEN, "only a signed-in person can subscribe to Web Push")
	}
	if err := s.checkUser(ctx, c.Name); err != nil {
		return nil, err
	}
	if err := s.checkEndpoint(ctx, r.Endpoint); err != nil {
		return nil, err
	}
	if err := checkKeys(r.Keys); err != nil {
		return nil, err
	}
	sub := &hitl.PushSubscription{
		Endpoint: r.Endpoint, User: c.Name, P256DH: r.Keys.P256DH, Auth: r.Keys.Auth,
		Untargeted: r.Untargeted, CreatedAt: s.now(),
	}
	if err := s.subs.SavePushSubscription(ctx, sub); err != nil {
		return nil, err
	}
	s.log.Info("push subscription saved", "user", c.Name, "push_service", endpointOrigin(r.Endpoint))
	return sub, nil
}

// checkUser refuses a caller who is not a user once the server has users
// (a token's name, say): only users' subscriptions are pushed to (see
// ofUsers).
func (s *Service) checkUser(ctx context.Context, name string) error {
	if s.ids == nil {
		return nil
	}
	users, err := s.ids.Users(ctx)
	if err != nil {
		return err
	}
	if len(users) > 0 && !slices.ContainsFunc(users, func(u *hitl.User) bool { return u.Name == name }) {
		return hitl.Errorf(hitl.EFORBIDDEN, "only a user signed in to the inbox can subscribe to Web Push")
	}
	return nil
}

// Unsubscribe removes the caller's subscription with endpoint, and reports
// whether there was one.
func (s *Service) Unsubscribe(ctx context.Context, endpoint string) (bool, error) {
	c := hitl.CallerFrom(ctx)
	if c.Name == "" {
		return false, hitl.Errorf(hitl.EFORBIDDEN, "only a signed-in person can unsubscribe from Web Push")
	}
	if endpoint == "" {
		return false, hitl.Errorf(hitl.EINVALID, "endpoint is required")
	}
	return s.subs.DeletePushSubscription(ctx, c.Name, endpoint)
}

// checkEndpoint refuses an endpoint hitl would not send to: anything but
// https, except plain http on loopback when private addresses are
// allowed; and (unless they are) a host that is not public.
func (s *Service) checkEndpoint(ctx context.Context, endpoint string) error {
	if endpoint == "" {
		return hitl.Errorf(hitl.EINVALID, "endpoint is required")
	}
	if len(endpoint) > maxEndpoint {
		return hitl.Errorf(hitl.EINVALID, "endpoint must be at most %d bytes", maxEndpoint)
	}
	if err := s.checkScheme(endpoint); err != nil {
		return err
	}
	if err := webhook.CheckPublicURL(ctx, endpoint, s.private); err != nil {
		return hitl.Errorf(hitl.EINVALID, "endpoint %s", hitl.ErrorMessage(err))
	}
	return nil
}

// checkScheme refuses an endpoint that is not https (or plain http on
// loopback, when private addresses are allowed).
func (s *Service) checkScheme(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Hostname() == "" {
		return hitl.Errorf(hitl.EINVALID, "endpoint must be an absolute https URL")
	}
	if u.Scheme == "https" {
		return nil
	}
	if u.Scheme == "http" && s.private && loopback(u.Hostname()) {
		return nil
	}
	return hitl.Errorf(hitl.EINVALID, "endpoint must be an https URL; got scheme %q", u.Scheme)
}

// loopback reports whether host is localhost or a loopback address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// checkKeys refuses keys that cannot encrypt a push: p256dh must be a
// P-256 public key (65 bytes, uncompressed) and auth 16 bytes.
func checkKeys(k hitl.PushKeys) error {
	pub, err := decodeKey(k.P256DH)
	if err == nil {
		_, err = ecdh.P256().NewPublicKey(pub)
	}
	if err != nil {
		return hitl.Errorf(hitl.EINVALID, "keys.p256dh must be the browser's P-256 public key, base64url")
	}
	auth, err := decodeKey(k.Auth)
	if err != nil || len(auth) != 16 {
		return hitl.Errorf(hitl.EINVALID, "keys.auth must be the browser's 16-byte auth secret, base64url")
	}
	return nil
}

// decodeKey reads base64url with or without padding.
func decodeKey(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// endpointOrigin is the push service an endpoint belongs to, for logs:
// the endpoint itself is a capability and is not logged.
func endpointOrigin(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
