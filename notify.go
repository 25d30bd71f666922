package hitl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"sync"
)

// MaxNotifyDelay bounds how long an agent may ask a channel to wait before
// telling people.
const MaxNotifyDelay = MaxTimeout

// Notify is how an agent wants people told of its question beyond the web
// inbox, channel by channel: {"slack": {"delay_seconds": 30, "channel_id":
// "C0123"}} or {"slack": false}, {"email": false}, {"push": false}. Nil,
// or a channel left out, means the server's settings.
type Notify struct {
	Slack *SlackNotify `json:"slack,omitempty"`
	Email *Switch      `json:"email,omitempty"`
	Push  *Switch      `json:"push,omitempty"`
}

// SlackNotify is one interaction's Slack settings: off, or a delay and a
// channel that override the server's.
type SlackNotify struct {
	// Off is {"slack": false}: never post this interaction to Slack.
	Off bool
	// DelaySeconds, when set, replaces the server's delay before posting;
	// 0 posts at once.
	DelaySeconds *int
	// ChannelID, when set, replaces the server's channel.
	ChannelID string
}

// slackNotifyJSON is the object form of SlackNotify.
type slackNotifyJSON struct {
	DelaySeconds *int   `json:"delay_seconds,omitempty"`
	ChannelID    string `json:"channel_id,omitempty"`
}

// UnmarshalJSON accepts only known channels, so a typo is an error rather
// than a notification silently sent with the defaults.
func (n *Notify) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf(`notify must be an object such as {"slack": {"delay_seconds": 60}}`)
	}
	out := Notify{}
	for k, v := range m {
		switch k {
		case "slack":
			if isNull(v) {
				continue
			}
			out.Slack = new(SlackNotify)
			if err := out.Slack.UnmarshalJSON(v); err != nil {
				return err
			}
		case "email", "push":
			if isNull(v) {
				continue
			}
			sw := new(Switch)
			if err := sw.unmarshal(k, v); err != nil {
				return err
			}
			if k == "email" {
				out.Email = sw
			} else {
				out.Push = sw
			}
		default:
			return fmt.Errorf("notify: unknown channel %q; the channels are slack, email and push", k)
		}
	}
	*n = out
	return nil
}

// UnmarshalJSON reads false (off), true (the server's settings) or an
// object {delay_seconds, channel_id}; unknown fields are refused.
func (s *SlackNotify) UnmarshalJSON(b []byte) error {
	b = trimJSONSpace(b)
	switch {
	case bytes.Equal(b, []byte("false")):
		*s = SlackNotify{Off: true}
		return nil
	case bytes.Equal(b, []byte("true")):
		*s = SlackNotify{}
		return nil
	}
	var v struct {
		DelaySeconds *float64 `json:"delay_seconds"`
		ChannelID    *string  `json:"channel_id"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf(`notify.slack must be false, true or {"delay_seconds": N, "channel_id": "C…"}`)
	}
	out := SlackNotify{}
	if v.DelaySeconds != nil {
		f := *v.DelaySeconds
		if f != math.Trunc(f) || f < 0 || f > MaxNotifyDelay.Seconds() {
			return fmt.Errorf("notify.slack.delay_seconds must be a whole number of seconds from 0 to %d", int(MaxNotifyDelay.Seconds()))
		}
		n := int(f)
		out.DelaySeconds = &n
	}
	if v.ChannelID != nil {
		out.ChannelID = *v.ChannelID
	}
	*s = out
	return nil
}

// MarshalJSON writes false when Off, else the object form.
func (s SlackNotify) MarshalJSON() ([]byte, error) {
	if s.Off {
		return []byte("false"), nil
	}
	return json.Marshal(slackNotifyJSON{DelaySeconds: s.DelaySeconds, ChannelID: s.ChannelID})
}

// slackChannelID matches a Slack conversation ID: a public or private
// channel (C…, G…) or a direct message (D…). Compiled when first used,
// as are the package's other patterns, not at every start of hitl (an
// agent's command hook starts it for each tool call).
var slackChannelID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[CGD][A-Z0-9]{2,63}$`) })

// ValidSlackChannelID reports whether id looks like a Slack conversation
// ID (such as C0123ABCD).
func ValidSlackChannelID(id string) bool {
	return slackChannelID().MatchString(id)
}

// normalizeNotify validates n and returns the copy to store: nil when it
// asks for nothing beyond the defaults.
func normalizeNotify(n *Notify) (*Notify, error) {
	if n == nil {
		return nil, nil
	}
	slack, err := normalizeSlackNotify(n.Slack)
	if err != nil {
		return nil, err
	}
	out := &Notify{Slack: slack}
	if n.Email != nil && n.Email.Off {
		out.Email = &Switch{Off: true}
	}
	if n.Push != nil && n.Push.Off {
		out.Push = &Switch{Off: true}
	}
	if out.Slack == nil && out.Email == nil && out.Push == nil {
		return nil, nil
	}
	return out, nil
}

// normalizeSlackNotify validates s and returns the copy to store: nil when
// it asks for nothing beyond the defaults.
func normalizeSlackNotify(n *SlackNotify) (*SlackNotify, error) {
	if n == nil {
		return nil, nil
	}
	s := *n
	if s.Off {
		return &SlackNotify{Off: true}, nil
	}
	if s.DelaySeconds != nil {
		if d := *s.DelaySeconds; d < 0 || d > int(MaxNotifyDelay.Seconds()) {
			return nil, Errorf(EINVALID, "notify.slack.delay_seconds must be from 0 to %d", int(MaxNotifyDelay.Seconds()))
		}
		d := *s.DelaySeconds
		s.DelaySeconds = &d
	}
	if s.ChannelID != "" && !ValidSlackChannelID(s.ChannelID) {
		return nil, Errorf(EINVALID, "notify.slack.channel_id must be a Slack channel ID such as C0123ABCD; got %q", s.ChannelID)
	}
	if s.DelaySeconds == nil && s.ChannelID == "" {
		return nil, nil
	}
	return &s, nil
}

// SlackOff reports whether the agent turned Slack off for in.
func (in *Interaction) SlackOff() bool {
	return in.Notify != nil && in.Notify.Slack != nil && in.Notify.Slack.Off
}

// SlackSettings returns the interaction's own Slack delay (nil for the
// server's) and channel ("" for the server's).
func (in *Interaction) SlackSettings() (delaySeconds *int, channelID string) {
	if in.Notify == nil || in.Notify.Slack == nil {
		return nil, ""
	}
	return in.Notify.Slack.DelaySeconds, in.Notify.Slack.ChannelID
}

// Switch is a channel that is on or off for one interaction: {"email":
// false} keeps it out of email; true (or leaving it out) means the
// server's settings.
type Switch struct {
	Off bool
}

func (s *Switch) unmarshal(channel string, b []byte) error {
	switch string(trimJSONSpace(b)) {
	case "false":
		*s = Switch{Off: true}
	case "true":
		*s = Switch{}
	default:
		return fmt.Errorf("notify.%s must be true or false", channel)
	}
	return nil
}

// MarshalJSON writes false when Off, else true.
func (s Switch) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatBool(!s.Off)), nil
}

// UnmarshalJSON reads true or false.
func (s *Switch) UnmarshalJSON(b []byte) error {
	return s.unmarshal("channel", b)
}

// EmailOff reports whether the agent kept in out of email.
func (in *Interaction) EmailOff() bool {
	return in.Notify != nil && in.Notify.Email != nil && in.Notify.Email.Off
}

// PushOff reports whether the agent kept in out of Web Push.
func (in *Interaction) PushOff() bool {
	return in.Notify != nil && in.Notify.Push != nil && in.Notify.Push.Off
}
