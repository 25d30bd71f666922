package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// sendTimeout bounds one SMTP conversation.
const sendTimeout = 30 * time.Second

// sender sends mail through one SMTP server.
type sender struct {
	target smtpTarget
	from   string
	// tls, when set, replaces the TLS settings (tests trust their own
	// certificate with it).
	tls *tls.Config
}

// newSender returns a sender for cfg.
func newSender(cfg Config, tlsConfig *tls.Config) (*sender, error) {
	t, err := parseSMTPURL(cfg.SMTPURL)
	if err != nil {
		return nil, err
	}
	return &sender{target: t, from: cfg.From, tls: tlsConfig}, nil
}

// send delivers msgs in one SMTP session: over TLS from the start for
// smtps, else upgraded with STARTTLS when the server offers it; with the
// URL's credentials when it has them.
func (s *sender) send(ctx context.Context, msgs ...*message) error {
	opts := []gomail.Option{gomail.WithPort(s.target.port), gomail.WithTimeout(sendTimeout)}
	if s.target.implicit {
		opts = append(opts, gomail.WithSSL())
	} else {
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if s.tls != nil {
		opts = append(opts, gomail.WithTLSConfig(s.tls))
	} else {
		opts = append(opts, gomail.WithTLSConfig(&tls.Config{ServerName: s.target.host, MinVersion: tls.VersionTLS12}))
	}
	if s.target.user != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.target.user), gomail.WithPassword(s.target.password))
	}
	c, err := gomail.NewClient(s.target.host, opts...)
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}
	out := make([]*gomail.Msg, 0, len(msgs))
	for _, m := range msgs {
		gm, err := s.msg(m)
		if err != nil {
			return err
		}
		out = append(out, gm)
	}
	return c.DialAndSendWithContext(ctx, out...)
}

// msg is m as go-mail writes it: multipart/alternative, text then HTML.
func (s *sender) msg(m *message) (*gomail.Msg, error) {
	gm := gomail.NewMsg()
	if err := gm.From(s.from); err != nil {
		return nil, fmt.Errorf("from address: %w", err)
	}
	if err := gm.To(m.to); err != nil {
		return nil, permanentError{fmt.Errorf("recipient address %q: %w", m.to, err)}
	}
	gm.Subject(m.subject)
	gm.SetMessageID()
	gm.SetDate()
	// Auto-replies (out of office) are not wanted back.
	gm.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated")
	gm.SetGenHeader(gomail.HeaderXAutoResponseSuppress, "All")
	gm.SetBodyString(gomail.TypeTextPlain, m.text)
	if m.html != "" {
		gm.AddAlternativeString(gomail.TypeTextHTML, m.html)
	}
	return gm, nil
}

// permanentError is a sending error that retrying cannot fix.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// permanent reports whether err cannot be fixed by trying again: a bad
// address, or the server's 5xx refusal.
func permanent(err error) bool {
	var p permanentError
	if errors.As(err, &p) {
		return true
	}
	var se *gomail.SendError
	if errors.As(err, &se) {
		return !se.IsTemp() && se.ErrorCode() >= 500
	}
	return false
}
