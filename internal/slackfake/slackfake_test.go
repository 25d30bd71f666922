package slackfake_test

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl/internal/slackfake"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// wantSlackError checks that err is Slack's error code.
func wantSlackError(t *testing.T, what string, err error, code string) {
	t.Helper()
	if err == nil || err.Error() != code {
		t.Errorf("%s: got error %v, want %s", what, err, code)
	}
}

// TestWebAPI calls each method through slack-go, as hitl does.
func TestWebAPI(t *testing.T) {
	t.Parallel()
	f := slackfake.New(t, &slackfake.Options{Channels: []string{slackfake.Channel}})
	api := slack.New(slackfake.BotToken, slack.OptionAPIURL(f.URL+"/"))
	ctx := context.Background()

	who, err := api.AuthTestContext(ctx)
	if err != nil || who.Team != slackfake.Team {
		t.Errorf("auth.test: got %+v, %v; want team %s", who, err, slackfake.Team)
	}
	_, err = slack.New("xoxb-0000-0000-notaccepted", slack.OptionAPIURL(f.URL+"/")).AuthTestContext(ctx)
	wantSlackError(t, "auth.test with an unknown token", err, "invalid_auth")
	_, err = slack.New(slackfake.AppToken, slack.OptionAPIURL(f.URL+"/")).AuthTestContext(ctx)
	wantSlackError(t, "auth.test with an app token", err, "not_allowed_token_type")

	channel, ts, err := api.PostMessageContext(ctx, slackfake.Channel, slack.MsgOptionText("hello", false))
	if err != nil || channel != slackfake.Channel || ts == "" {
		t.Fatalf("chat.postMessage: got %q %q %v", channel, ts, err)
	}
	_, ts2, _ := api.PostMessageContext(ctx, slackfake.Channel, slack.MsgOptionText("again", false))
	if ts2 == ts {
		t.Errorf("two posts got the same ts %s", ts)
	}
	_, _, err = api.PostMessageContext(ctx, "C0NOWHERE1", slack.MsgOptionText("lost", false))
	wantSlackError(t, "a post to an unknown channel", err, "channel_not_found")
	f.FailPosts("not_in_channel")
	_, _, err = api.PostMessageContext(ctx, slackfake.Channel, slack.MsgOptionText("refused", false))
	wantSlackError(t, "a post while failing", err, "not_in_channel")
	f.FailPosts("")

	block := slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "<b>", false, false), nil, nil)
	if _, _, _, err := api.UpdateMessageContext(ctx, slackfake.Channel, ts, slack.MsgOptionBlocks(block)); err != nil {
		t.Errorf("chat.update: %v", err)
	}
	upd := f.WaitFor("chat.update", 1, func(c slackfake.Call) bool { return c.Form.Get("ts") == ts })[0]
	if !strings.Contains(upd.Blocks(), `"text":"<b>"`) || upd.Token != slackfake.BotToken {
		t.Errorf("chat.update recorded as %+v, blocks %s", upd, upd.Blocks())
	}

	_, err = api.GetUserInfoContext(ctx, "UALICE01")
	wantSlackError(t, "users.info of an unknown user", err, "user_not_found")
	f.SetUser("UALICE01", "alice@example.com")
	if u, err := api.GetUserInfoContext(ctx, "UALICE01"); err != nil || u.Profile.Email != "alice@example.com" {
		t.Errorf("users.info: got %+v, %v", u, err)
	}

	if _, err := api.OpenViewContext(ctx, "TRIGGER1", slack.ModalViewRequest{Type: slack.VTModal, CallbackID: "cb"}); err != nil {
		t.Errorf("views.open: %v", err)
	}
	if c := f.Calls("views.open"); len(c) != 1 || c[0].Body["trigger_id"] != "TRIGGER1" {
		t.Errorf("views.open recorded as %+v", c)
	}

	resp, err := http.Post(f.URL+"/conversations.kick", "application/x-www-form-urlencoded", strings.NewReader("token="+slackfake.BotToken))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"error":"unknown_method"`) {
		t.Errorf("an unknown method: got %s", body)
	}

	posts := f.Calls("chat.postMessage")
	if len(posts) != 4 || posts[1].Form.Get("text") != "again" {
		t.Errorf("chat.postMessage calls: got %d, want 4 with the second saying again", len(posts))
	}
	if n := len(f.Calls("")); n != 12 {
		t.Errorf("calls in all: got %d, want 12", n)
	}
}

// TestInProcess reaches an unstarted fake without a network.
func TestInProcess(t *testing.T) {
	t.Parallel()
	f := slackfake.NewUnstarted(t, nil)
	api := slack.New(slackfake.BotToken, slack.OptionAPIURL("http://slack.invalid/"), slack.OptionHTTPClient(f.Client()))
	if _, _, err := api.PostMessageContext(context.Background(), "C0ANY00001", slack.MsgOptionText("hi", false)); err != nil {
		t.Fatalf("chat.postMessage in process: %v", err)
	}
	if f.URL != "" {
		t.Errorf("an unstarted fake has URL %q", f.URL)
	}
	if c := f.WaitFor("chat.postMessage", 1, nil); c[0].Form.Get("channel") != "C0ANY00001" {
		t.Errorf("posted to %q", c[0].Form.Get("channel"))
	}
}

// TestSocketMode connects slack-go's Socket Mode client, delivers an
// envelope to it and reads its acknowledgement.
func TestSocketMode(t *testing.T) {
	t.Parallel()
	f := slackfake.New(t, nil)
	api := slack.New(slackfake.BotToken, slack.OptionAPIURL(f.URL+"/"), slack.OptionAppLevelToken(slackfake.AppToken))
	client := socketmode.New(api, socketmode.OptionLog(log.New(io.Discard, "", 0)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- client.RunContext(ctx) }()
	t.Cleanup(cancel)
	go func() {
		for ev := range client.Events {
			if ev.Type == socketmode.EventTypeEventsAPI && ev.Request != nil {
				_ = client.Ack(*ev.Request, map[string]any{"seen": ev.Request.EnvelopeID})
			}
		}
	}()
	f.WaitConnected(1, slackfake.AppToken)

	payload := map[string]any{"type": "event_callback", "event_id": "Ev1", "event": map[string]any{"type": "message", "text": "hi"}}
	f.Send(slackfake.Envelope("E1", "events_api", payload))
	var got map[string]string
	if err := json.Unmarshal(f.WaitAck("E1"), &got); err != nil || got["seen"] != "E1" {
		t.Errorf("acknowledgement of E1: got %v, %v", got, err)
	}

	// Closing the client closes its connection.
	cancel()
	<-done
	f.WaitConnected(1)
}

// TestSocketTickets: a Socket Mode URL is for the app token only, and
// for one connection.
func TestSocketTickets(t *testing.T) {
	t.Parallel()
	f := slackfake.New(t, nil)
	ctx := context.Background()
	_, _, err := slack.New(slackfake.BotToken, slack.OptionAPIURL(f.URL+"/")).StartSocketModeContext(ctx)
	wantSlackError(t, "apps.connections.open without a token", err, "not_authed")
	_, _, err = slack.New(slackfake.BotToken, slack.OptionAPIURL(f.URL+"/"), slack.OptionAppLevelToken(slackfake.BotToken)).StartSocketModeContext(ctx)
	wantSlackError(t, "apps.connections.open with a bot token", err, "not_allowed_token_type")

	api := slack.New(slackfake.BotToken, slack.OptionAPIURL(f.URL+"/"), slack.OptionAppLevelToken(slackfake.AppToken))
	_, url, err := api.StartSocketModeContext(ctx)
	if err != nil {
		t.Fatalf("apps.connections.open: %v", err)
	}
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	defer c.CloseNow()
	f.WaitConnected(1, slackfake.AppToken)
	if _, _, err := websocket.Dial(ctx, url, nil); err == nil {
		t.Errorf("a ticket was accepted twice")
	}
}
