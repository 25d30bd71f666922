package hitl_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

func intp(n int) *int { return &n }

func TestNotifyDecodeAndStore(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *hitl.Notify // as stored on the interaction
	}{
		{"absent", `{"question":"q"}`, nil},
		{"null", `{"question":"q","notify":null}`, nil},
		{"empty", `{"question":"q","notify":{}}`, nil},
		{"slack null", `{"question":"q","notify":{"slack":null}}`, nil},
		{"slack true means defaults", `{"question":"q","notify":{"slack":true}}`, nil},
		{"slack empty object", `{"question":"q","notify":{"slack":{}}}`, nil},
		{"off", `{"question":"q","notify":{"slack":false}}`, &hitl.Notify{Slack: &hitl.SlackNotify{Off: true}}},
		{"delay", `{"question":"q","notify":{"slack":{"delay_seconds":30}}}`, &hitl.Notify{Slack: &hitl.SlackNotify{DelaySeconds: intp(30)}}},
		{"delay zero", `{"question":"q","notify":{"slack":{"delay_seconds":0}}}`, &hitl.Notify{Slack: &hitl.SlackNotify{DelaySeconds: intp(0)}}},
		{"delay as 30.0", `{"question":"q","notify":{"slack":{"delay_seconds":30.0}}}`, &hitl.Notify{Slack: &hitl.SlackNotify{DelaySeconds: intp(30)}}},
		{"channel", `{"question":"q","notify":{"slack":{"channel_id":"C0123ABCD"}}}`, &hitl.Notify{Slack: &hitl.SlackNotify{ChannelID: "C0123ABCD"}}},
		{"both", `{"question":"q","notify":{"slack":{"delay_seconds":5,"channel_id":"G0123"}}}`, &hitl.Notify{Slack: &hitl.SlackNotify{DelaySeconds: intp(5), ChannelID: "G0123"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := createJSON(t, tt.body)
			if diff := cmp.Diff(tt.want, in.Notify); diff != "" {
				t.Errorf("Notify (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNotifyDecodeRefuses(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"unknown channel", `{"notify":{"sms":true}}`, `unknown channel "sms"`},
		{"email object", `{"notify":{"email":{"delay_seconds":1}}}`, "notify.email must be true or false"},
		{"push string", `{"notify":{"push":"no"}}`, "notify.push must be true or false"},
		{"not an object", `{"notify":"slack"}`, "notify must be an object"},
		{"slack string", `{"notify":{"slack":"yes"}}`, "notify.slack must be"},
		{"unknown field", `{"notify":{"slack":{"delay":30}}}`, "notify.slack must be"},
		{"negative delay", `{"notify":{"slack":{"delay_seconds":-1}}}`, "whole number of seconds"},
		{"fractional delay", `{"notify":{"slack":{"delay_seconds":1.5}}}`, "whole number of seconds"},
		{"huge delay", `{"notify":{"slack":{"delay_seconds":1e12}}}`, "whole number of seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req hitl.CreateRequest
			err := json.Unmarshal([]byte(tt.body), &req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("decode %s: got error %v, want one containing %q", tt.body, err, tt.want)
			}
		})
	}
}

func TestNotifyValidation(t *testing.T) {
	tests := []struct {
		name   string
		notify *hitl.Notify
		want   string
	}{
		{"bad channel", &hitl.Notify{Slack: &hitl.SlackNotify{ChannelID: "#general"}}, "channel_id must be a Slack channel ID"},
		{"lower-case channel", &hitl.Notify{Slack: &hitl.SlackNotify{ChannelID: "c0123"}}, "channel_id"},
		{"negative delay from Go", &hitl.Notify{Slack: &hitl.SlackNotify{DelaySeconds: intp(-5)}}, "delay_seconds must be from 0"},
		{"delay past the maximum", &hitl.Notify{Slack: &hitl.SlackNotify{DelaySeconds: intp(int(hitl.MaxNotifyDelay.Seconds()) + 1)}}, "delay_seconds must be from 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := hitl.NewInteraction(hitl.CreateRequest{Question: "q", Notify: tt.notify}, agent, now)
			wantErr(t, err, hitl.ErrInvalid, tt.want)
		})
	}
}

// TestNotifyCopied checks that the stored settings do not alias the
// request's, and that Off drops the other settings.
func TestNotifyCopied(t *testing.T) {
	d := 10
	req := hitl.CreateRequest{Question: "q", Notify: &hitl.Notify{Slack: &hitl.SlackNotify{DelaySeconds: &d}}}
	in := create(t, req)
	d = 99
	if got := *in.Notify.Slack.DelaySeconds; got != 10 {
		t.Errorf("stored delay: got %d, want 10 (it must not alias the request)", got)
	}
	off := create(t, hitl.CreateRequest{Question: "q", Notify: &hitl.Notify{Slack: &hitl.SlackNotify{Off: true, ChannelID: "C1234"}}})
	if diff := cmp.Diff(&hitl.Notify{Slack: &hitl.SlackNotify{Off: true}}, off.Notify); diff != "" {
		t.Errorf("off (-want +got):\n%s", diff)
	}
	if !off.SlackOff() || in.SlackOff() {
		t.Errorf("SlackOff: got %v and %v, want true and false", off.SlackOff(), in.SlackOff())
	}
	delay, ch := in.SlackSettings()
	if delay == nil || *delay != 10 || ch != "" {
		t.Errorf("SlackSettings: got %v, %q; want 10, \"\"", delay, ch)
	}
}

// TestNotifyNotInFingerprint checks that notification settings do not
// make an idempotent repeat a different question.
func TestNotifyNotInFingerprint(t *testing.T) {
	a := create(t, hitl.CreateRequest{Question: "q"})
	b := create(t, hitl.CreateRequest{Question: "q", Notify: &hitl.Notify{Slack: &hitl.SlackNotify{Off: true}}})
	if a.RequestHash != b.RequestHash {
		t.Errorf("request hashes differ with only notify changed")
	}
}

func TestNotifyJSONRoundTrip(t *testing.T) {
	for _, n := range []*hitl.Notify{
		{Slack: &hitl.SlackNotify{Off: true}},
		{Slack: &hitl.SlackNotify{DelaySeconds: intp(0), ChannelID: "C42"}},
	} {
		b, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		var got hitl.Notify
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if diff := cmp.Diff(n, &got); diff != "" {
			t.Errorf("round trip of %s (-want +got):\n%s", b, diff)
		}
	}
}

func TestNotifyEmailAndPushOff(t *testing.T) {
	var req hitl.CreateRequest
	if err := json.Unmarshal([]byte(`{"question":"q","notify":{"email":false,"push":false,"slack":true}}`), &req); err != nil {
		t.Fatal(err)
	}
	in, err := hitl.NewInteraction(req, hitl.Caller{Name: "agent", Channel: hitl.ChannelAPI, Role: hitl.RoleAgent}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if !in.EmailOff() || !in.PushOff() || in.SlackOff() {
		t.Errorf("EmailOff %v PushOff %v SlackOff %v; want true, true, false", in.EmailOff(), in.PushOff(), in.SlackOff())
	}
	b, err := json.Marshal(in.Notify)
	if err != nil || string(b) != `{"email":false,"push":false}` {
		t.Errorf("stored notify: got %s, %v; want {\"email\":false,\"push\":false}", b, err)
	}
	if err := json.Unmarshal([]byte(`{"question":"q","notify":{"email":true}}`), &req); err != nil {
		t.Fatal(err)
	}
	in, err = hitl.NewInteraction(req, hitl.Caller{Name: "agent", Channel: hitl.ChannelAPI, Role: hitl.RoleAgent}, time.Unix(0, 0))
	if err != nil || in.Notify != nil || in.EmailOff() {
		t.Errorf("notify {email: true}: got %+v, %v; want the defaults (nil)", in.Notify, err)
	}
}
