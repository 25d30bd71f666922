package slack

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/slackfake"
	_ "modernc.org/sqlite"
)

var (
	admin     = hitl.WithCaller(context.Background(), hitl.Caller{Name: "root", Role: hitl.RoleAdmin, Channel: hitl.ChannelAPI})
	responder = hitl.WithCaller(context.Background(), hitl.Caller{Name: "bob", Role: hitl.RoleResponder, Channel: hitl.ChannelAPI})
	agentCtx  = hitl.WithCaller(context.Background(), hitl.Caller{Name: "agent", Role: hitl.RoleAgent, Channel: hitl.ChannelAPI})
)

func TestMask(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"xoxb-1111-2222-abcdefghijkl", "xoxb-...ijkl"},
		{"xapp-1-A111-3333-mnopqrstuvwx", "xapp-...uvwx"},
		{"8f742231b10e8888abcd99yyyzzz85a5", "...85a5"},
		{"xoxb-short", "xoxb-..."},
		{"tiny", "..."},
	} {
		if got := Mask(tt.in); got != tt.want {
			t.Errorf("Mask(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := hitl.ErrorCode(err); got != code {
		t.Fatalf("%s: got %v (code %q), want code %q", what, err, got, code)
	}
}

func TestConfigMaskedAndRoundTrip(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	got, err := h.s.Config(admin)
	if err != nil {
		t.Fatal(err)
	}
	want := ConfigView{Enabled: true, BotToken: "xoxb-...ijkl", AppToken: "", ChannelID: testChannel, SigningSecret: "...85a5",
		DelaySeconds: 0, Mention: MentionNone, UnmappedUsers: UnmappedUntargeted, Transport: TransportHTTP, FromEnvironment: []string{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Config (-want +got):\n%s", diff)
	}

	// The contract's settings UI posts back what it got: masked secrets keep theirs.
	got.ChannelID = "C0NEW00001"
	got.DelaySeconds = 300
	u := ConfigUpdate{Enabled: &got.Enabled, BotToken: &got.BotToken, AppToken: &got.AppToken, ChannelID: &got.ChannelID,
		SigningSecret: &got.SigningSecret, DelaySeconds: &got.DelaySeconds, Mention: &got.Mention}
	view, err := h.s.SetConfig(admin, u)
	if err != nil {
		t.Fatalf("SetConfig: %v", err)
	}
	if view.BotToken != "xoxb-...ijkl" || view.ChannelID != "C0NEW00001" || view.DelaySeconds != 300 {
		t.Errorf("view after saving: %+v", view)
	}
	stored, err := h.s.storedConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if stored.BotToken != testBotToken || stored.SigningSecret != testSecret {
		t.Errorf("stored secrets after a masked round trip: got bot %q, secret %q; want them unchanged", Mask(stored.BotToken), Mask(stored.SigningSecret))
	}

	// A new secret replaces it; "" clears it.
	const newToken = "xoxb-9999-8888-zyxwvutsrqpo"
	if _, err := h.s.SetConfig(admin, ConfigUpdate{BotToken: new(newToken), SigningSecret: new("")}); err != nil {
		t.Fatalf("SetConfig: %v", err)
	}
	stored, _ = h.s.storedConfig(context.Background())
	if stored.BotToken != newToken || stored.SigningSecret != "" {
		t.Errorf("stored after replacing: bot %q, secret %q", Mask(stored.BotToken), Mask(stored.SigningSecret))
	}
	if cfg, _ := h.s.client(); cfg.BotToken != newToken || cfg.Transport() != TransportNone {
		t.Errorf("configuration in effect not reloaded: bot %q, transport %s", Mask(cfg.BotToken), cfg.Transport())
	}
}

func TestConfigSecretsEncryptedAtRest(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	if _, err := h.s.SetConfig(admin, ConfigUpdate{Enabled: new(true), BotToken: new(testBotToken), AppToken: new(testAppToken),
		SigningSecret: new(testSecret), ChannelID: new(testChannel)}); err != nil {
		t.Fatalf("SetConfig: %v", err)
	}
	db, err := sql.Open("sqlite", h.db.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var bot, app, secret string
	if err := db.QueryRow(`SELECT bot_token, app_token, signing_secret FROM slack_config`).Scan(&bot, &app, &secret); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ raw, clear string }{{bot, testBotToken}, {app, testAppToken}, {secret, testSecret}} {
		if !strings.HasPrefix(tt.raw, "v1:") || strings.Contains(tt.raw, tt.clear) || strings.Contains(tt.raw, tt.clear[len(tt.clear)-6:]) {
			t.Errorf("stored value %q: want it sealed, without the secret", tt.raw)
		}
	}
	// Another key cannot open them.
	other, _ := NewCipher([]byte("ffffffffffffffffffffffffffffffff"))
	if _, err := other.Open("bot_token", bot); err == nil {
		t.Errorf("a different key opened the stored bot token")
	}
}

func TestConfigEnvironmentWins(t *testing.T) {
	t.Parallel()
	const envToken = "xoxb-7777-6666-environmentt"
	h := newHarness(t, harnessOptions{
		config:   httpConfig(),
		settings: Settings{BotToken: envToken, ChannelID: "C0ENV00001", DelaySeconds: new(30)},
	})
	got, err := h.s.Config(admin)
	if err != nil {
		t.Fatal(err)
	}
	if got.BotToken != Mask(envToken) || got.ChannelID != "C0ENV00001" || got.DelaySeconds != 30 {
		t.Errorf("config: got %+v, want the environment's values", got)
	}
	if diff := cmp.Diff([]string{"bot_token", "channel_id", "delay_seconds"}, got.FromEnvironment); diff != "" {
		t.Errorf("from_environment (-want +got):\n%s", diff)
	}
	// Sent back unchanged (or masked): fine.
	if _, err := h.s.SetConfig(admin, ConfigUpdate{BotToken: new(got.BotToken), ChannelID: new("C0ENV00001"), DelaySeconds: new(30), Mention: new(MentionChannel)}); err != nil {
		t.Fatalf("SetConfig with the environment's values: %v", err)
	}
	// Changed: refused, naming the variable.
	_, err = h.s.SetConfig(admin, ConfigUpdate{ChannelID: new("C0OTHER001")})
	wantCode(t, "changing a field the environment sets", err, hitl.ECONFLICT)
	if !strings.Contains(hitl.ErrorMessage(err), "HITL_SLACK_CHANNEL_ID") {
		t.Errorf("message: %q, want it to name HITL_SLACK_CHANNEL_ID", hitl.ErrorMessage(err))
	}
	if got, _ := h.s.Config(admin); got.Mention != MentionChannel {
		t.Errorf("mention: got %q, want channel (not from the environment, so saved)", got.Mention)
	}
}

func TestConfigAdminsOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	for name, ctx := range map[string]context.Context{"responder": responder, "agent": agentCtx} {
		_, err := h.s.Config(ctx)
		wantCode(t, name+" reading", err, hitl.EFORBIDDEN)
		_, err = h.s.SetConfig(ctx, ConfigUpdate{Enabled: new(false)})
		wantCode(t, name+" saving", err, hitl.EFORBIDDEN)
		_, err = h.s.Test(ctx, nil)
		wantCode(t, name+" testing", err, hitl.EFORBIDDEN)
	}
	if _, err := h.s.Config(context.Background()); err != nil {
		t.Errorf("local mode (the local caller is an admin): %v", err)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	for _, tt := range []struct {
		name string
		u    ConfigUpdate
		want string
	}{
		{"user token", ConfigUpdate{BotToken: new("xoxp-1234")}, "bot_token must be a bot token"},
		{"bot token as app token", ConfigUpdate{AppToken: new(testBotToken)}, "app_token must be an app-level token"},
		{"channel name", ConfigUpdate{ChannelID: new("#general")}, "channel_id must be a Slack channel ID"},
		{"negative delay", ConfigUpdate{DelaySeconds: new(-1)}, "delay_seconds"},
		{"mention", ConfigUpdate{Mention: new("everyone")}, "mention must be none, here or channel"},
		{"unmapped", ConfigUpdate{UnmappedUsers: new("all")}, "unmapped_users"},
		{"enabled without a channel", ConfigUpdate{Enabled: new(true), BotToken: new(testBotToken)}, "needs a bot_token and a channel_id"},
	} {
		_, err := h.s.SetConfig(admin, tt.u)
		wantCode(t, tt.name, err, hitl.EINVALID)
		if !strings.Contains(hitl.ErrorMessage(err), tt.want) {
			t.Errorf("%s: message %q, want %q", tt.name, hitl.ErrorMessage(err), tt.want)
		}
	}
	if _, err := h.s.storedConfig(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.SlackConfig(context.Background()); !errors.Is(err, hitl.ErrNotFound) {
		t.Errorf("refused updates saved something: %v", err)
	}
}

func TestConfigWithoutKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{noCipher: true, settings: Settings{BotToken: testBotToken}})
	_, err := h.s.SetConfig(admin, ConfigUpdate{SigningSecret: new(testSecret)})
	wantCode(t, "saving a secret without a key", err, hitl.EINVALID)
	if !strings.Contains(hitl.ErrorMessage(err), "HITL_SECRET_KEY") {
		t.Errorf("message %q, want it to say how to set a key", hitl.ErrorMessage(err))
	}
	// Secrets from the environment, the rest saved: fine.
	if _, err := h.s.SetConfig(admin, ConfigUpdate{Enabled: new(true), ChannelID: new(testChannel)}); err != nil {
		t.Fatalf("SetConfig without secrets: %v", err)
	}
}

func TestEnablingPostsWhatIsPending(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	in := h.ask(hitl.CreateRequest{Question: "asked while Slack was off"})
	if _, err := h.s.SetConfig(admin, ConfigUpdate{Enabled: new(true), BotToken: new(testBotToken), ChannelID: new(testChannel), DelaySeconds: new(0)}); err != nil {
		t.Fatalf("SetConfig: %v", err)
	}
	h.waitPosted(in)
}

func TestConnectionTest(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: socketConfig()})
	res, err := h.s.Test(admin, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || !strings.Contains(res.Message, "Slack connection test successful") {
		t.Fatalf("test: got %+v", res)
	}
	posted := h.fake.WaitFor("chat.postMessage", 1, func(c slackfake.Call) bool {
		return strings.Contains(c.Form.Get("text"), "test of its Slack connection")
	})
	if posted[0].Form.Get("channel") != testChannel {
		t.Errorf("test message posted to %q, want %s", posted[0].Form.Get("channel"), testChannel)
	}
	if len(h.fake.Calls("auth.test")) == 0 {
		t.Errorf("auth.test was not called")
	}

	// Settings tried before saving: a token Slack refuses.
	res, err = h.s.Test(admin, &ConfigUpdate{BotToken: new("xoxb-0000-0000-notavalidone")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Success || !strings.Contains(res.Message, "auth.test failed") || !strings.Contains(res.Message, "invalid_auth") {
		t.Errorf("test with a refused token: got %+v", res)
	}
	if stored, _ := h.s.storedConfig(context.Background()); stored.BotToken != testBotToken {
		t.Errorf("Test saved its settings")
	}
	res, _ = h.s.Test(admin, &ConfigUpdate{ChannelID: new("")})
	if res.Success || !strings.Contains(res.Message, "channel") {
		t.Errorf("test without a channel: got %+v", res)
	}
}
