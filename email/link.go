package email

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
)

// A link in a mail carries a token that is its only credential:
//
//	v1.<notification id>.<option key, base64url>.<expiry, unix seconds>.<MAC, base64url>
//
// The MAC is HMAC-SHA256, under the server's link key, of everything the
// link stands for: its notification (and so its recipient, who answers),
// the interaction, the option and the expiry (the question's deadline).
// Changing any part of the token, or moving it to another recipient's
// notification, breaks the MAC. A link records one answer (the
// notification's UsedAt), and a GET never records anything.

// linkVersion starts every token.
const linkVersion = "v1"

// linkKeySize is the size of the link key.
const linkKeySize = 32

// link is what a verified token stands for.
type link struct {
	notificationID string
	option         string // the option key it answers with
	expires        time.Time
}

// macInput is the text the MAC covers.
func macInput(n *hitl.Notification, option string, expires int64) []byte {
	return []byte(strings.Join([]string{
		"hitl email link", linkVersion, n.ID, n.InteractionID, n.Recipient, n.Responder, option,
		strconv.FormatInt(expires, 10),
	}, "\x00"))
}

// sign returns the token of a link that answers n's interaction with
// option as n's recipient, valid until expires.
func sign(key []byte, n *hitl.Notification, option string, expires time.Time) string {
	exp := expires.Unix()
	m := hmac.New(sha256.New, key)
	m.Write(macInput(n, option, exp))
	enc := base64.RawURLEncoding
	return strings.Join([]string{linkVersion, n.ID, enc.EncodeToString([]byte(option)),
		strconv.FormatInt(exp, 10), enc.EncodeToString(m.Sum(nil))}, ".")
}

// parseToken splits a token into what it claims, unverified, and its MAC.
func parseToken(token string) (l link, mac []byte, ok bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 5 || parts[0] != linkVersion || parts[1] == "" {
		return link{}, nil, false
	}
	enc := base64.RawURLEncoding
	opt, err1 := enc.DecodeString(parts[2])
	exp, err2 := strconv.ParseInt(parts[3], 10, 64)
	mac, err3 := enc.DecodeString(parts[4])
	if err1 != nil || err2 != nil || err3 != nil || len(mac) != sha256.Size {
		return link{}, nil, false
	}
	return link{notificationID: parts[1], option: string(opt), expires: time.Unix(exp, 0)}, mac, true
}

// verify reports whether mac is the MAC of l for notification n.
func verify(key []byte, n *hitl.Notification, l link, mac []byte) bool {
	m := hmac.New(sha256.New, key)
	m.Write(macInput(n, l.option, l.expires.Unix()))
	return hmac.Equal(m.Sum(nil), mac)
}

// linkExpiry is when the links to in stop working: its deadline.
func linkExpiry(in *hitl.Interaction) time.Time {
	if !in.Deadline.IsZero() {
		return in.Deadline
	}
	return in.CreatedAt.Add(hitl.MaxTimeout)
}
