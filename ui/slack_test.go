package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/slack"
)

const slackConfigPath = "/api/human-feedback/slack/config"

// slackConfig is what the tests read of GET …/slack/config.
type slackConfig struct {
	Enabled         bool     `json:"enabled"`
	BotToken        string   `json:"bot_token"`
	AppToken        string   `json:"app_token"`
	ChannelID       string   `json:"channel_id"`
	SigningSecret   string   `json:"signing_secret"`
	DelaySeconds    int      `json:"delay_seconds"`
	Mention         string   `json:"mention"`
	UnmappedUsers   string   `json:"unmapped_users"`
	FromEnvironment []string `json:"from_environment"`
}

// slackConfig reads the Slack configuration through the API.
func (s *hitlServer) slackConfig(t *testing.T) slackConfig {
	t.Helper()
	code, data := s.call(t, http.MethodGet, slackConfigPath, nil)
	var c slackConfig
	if err := json.Unmarshal(data, &c); code != http.StatusOK || err != nil {
		t.Fatalf("GET %s: %d %s", slackConfigPath, code, data)
	}
	return c
}

// saveSlackConfig saves settings through the API, as an admin would with
// curl.
func (s *hitlServer) saveSlackConfig(t *testing.T, body map[string]any) {
	t.Helper()
	if code, data := s.call(t, http.MethodPost, slackConfigPath, body); code != http.StatusOK {
		t.Fatalf("POST %s: %d %s", slackConfigPath, code, data)
	}
}

// openSlack opens the Slack settings from the header and waits for the
// dialog.
func (p *page) openSlack() {
	p.t.Helper()
	p.clickTopBar("slack-btn")
	p.waitJS(`document.getElementById("slack-dialog").open && document.getElementById("slack-dialog").contains(document.activeElement)`)
}

// typeInto replaces the value of the input matching sel by typing text.
func (p *page) typeInto(sel, text string) {
	p.t.Helper()
	p.do(
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%s).value = ""`, js(sel))),
		chromedp.SendKeys(chromedp.CSS(sel), text),
	)
}

// waitResult waits for the dialog's result line to hold text.
func (p *page) waitResult(text string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`document.getElementById("slack-result").textContent.includes(%s)`, js(text)))
}

// TestSlackSettings: the admin opens the Slack settings from the header,
// sees saved secrets only masked and the environment's settings
// read-only, is stopped by bad values at the field, tests the connection
// against a fake Slack (with a wrong token, then the right one), saves new
// values (read back through the API), removes a secret, and closes the
// dialog with Escape.
func TestSlackSettings(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{slack: slack.Settings{Mention: slack.MentionHere}})
	const appToken = fakeAppToken
	srv.saveSlackConfig(t, map[string]any{"bot_token": fakeBotToken, "app_token": appToken, "channel_id": "C0OLD0001", "delay_seconds": 300})

	p := openPage(t, srv)
	// By keyboard: the button, Enter.
	p.waitTopBar("slack-btn")
	p.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("slack-btn").focus()`), chromedp.KeyEvent(kb.Enter))
	p.waitJS(`document.getElementById("slack-dialog").open`)
	if got := eval[string](p, `document.activeElement.id`); got != "slack-enabled" {
		t.Errorf("focus on #%s when the dialog opens, want the on/off switch", got)
	}
	if got := eval[string](p, `document.getElementById("slack-btn").getAttribute("aria-label")`); got != "Slack settings" {
		t.Errorf("the Slack button is named %q", got)
	}
	// Saved secrets: named by their mask, never in the page in full.
	if got := p.text("#slack-bot-token-saved"); got != "Saved: xoxb-...ijkl" {
		t.Errorf("saved bot token shown as %q", got)
	}
	if got := p.text("#slack-app-token-saved"); got != "Saved: xapp-...uvwx" {
		t.Errorf("saved app token shown as %q", got)
	}
	for _, secret := range []string{fakeBotToken, appToken} {
		if eval[bool](p, fmt.Sprintf(`document.documentElement.outerHTML.includes(%s) || [...document.querySelectorAll("input")].some(i => i.value.includes(%s))`, js(secret), js(secret))) {
			t.Errorf("the page holds the secret %s", secret)
		}
	}
	values := eval[map[string]any](p, `({
		enabled: document.getElementById("slack-enabled").checked,
		bot: document.getElementById("slack-bot-token").value,
		channel: document.getElementById("slack-channel-id").value,
		delay: document.getElementById("slack-delay-seconds").value,
		unmapped: document.getElementById("slack-unmapped-users").value,
	})`)
	wantValues := map[string]any{"enabled": false, "bot": "", "channel": "C0OLD0001", "delay": "300", "unmapped": "untargeted"}
	if diff := cmp.Diff(wantValues, values); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	// The mention comes from the environment: shown, not editable.
	if !eval[bool](p, `document.getElementById("slack-mention-here").checked && [...document.querySelectorAll("input[name=slack-mention]")].every(i => i.disabled)`) {
		t.Error("the mention set by the environment is not shown as chosen and read-only")
	}
	if got := p.text("#slack-mention-note"); !strings.Contains(got, "HITL_SLACK_MENTION") {
		t.Errorf("the mention's note %q does not name HITL_SLACK_MENTION", got)
	}

	// Bad values are stopped in the page, at their fields.
	p.do(chromedp.Click(chromedp.CSS("#slack-enabled")))
	p.typeInto("#slack-bot-token", "abc-not-a-token")
	p.typeInto("#slack-channel-id", "general")
	p.do(chromedp.Click(chromedp.CSS("#slack-save")))
	p.waitJS(`document.getElementById("slack-bot-token-err").textContent === "Bot token starts with xoxb-"`)
	if got := p.text("#slack-channel-id-err"); !strings.Contains(got, "C0123ABCD") {
		t.Errorf("channel error %q", got)
	}
	if got := eval[string](p, `document.activeElement.id`); got != "slack-bot-token" {
		t.Errorf("focus on #%s after a refused save, want the first bad field", got)
	}
	if got := eval[string](p, `document.getElementById("slack-bot-token").getAttribute("aria-invalid")`); got != "true" {
		t.Errorf("bad bot token aria-invalid = %q", got)
	}
	if c := srv.slackConfig(t); c.Enabled || c.ChannelID != "C0OLD0001" {
		t.Fatalf("a refused save changed the configuration: %+v", c)
	}

	// Test connection, before saving: a token Slack refuses, then the
	// saved one with the right channel.
	p.typeInto("#slack-bot-token", "xoxb-9999-8888-wrongwrongwr")
	p.typeInto("#slack-channel-id", fakeChannel)
	p.do(chromedp.Click(chromedp.CSS("#slack-test")))
	p.waitResult("auth.test failed: Slack does not accept the bot token (invalid_auth)")
	if got := eval[string](p, `document.getElementById("slack-result").dataset.kind`); got != "error" {
		t.Errorf("failed test shown as %q", got)
	}
	p.do(
		chromedp.Evaluate[chromedp.Void](`document.getElementById("slack-bot-token").value = ""`),
		chromedp.Click(chromedp.CSS("#slack-test")),
	)
	p.waitResult("Slack connection test successful!")
	if got := p.text("#slack-result"); !strings.Contains(got, "hitl-test") || !strings.Contains(got, fakeChannel) {
		t.Errorf("test result %q: want the team and the channel", got)
	}
	if posts := srv.Slack.Calls("chat.postMessage"); len(posts) != 1 || !strings.Contains(posts[0].Form.Get("text"), "test of its Slack connection") ||
		posts[0].Form.Get("channel") != fakeChannel || posts[0].Token != fakeBotToken {
		t.Errorf("posted to Slack: %+v, want one test message to %s with the saved bot token", posts, fakeChannel)
	}
	if c := srv.slackConfig(t); c.ChannelID != "C0OLD0001" {
		t.Errorf("testing saved the channel: %+v", c)
	}

	// Save: new values, a new signing secret, the app token removed.
	const secret = "8f742231b10e8888abcd99yyyzzz85a5"
	p.typeInto("#slack-signing-secret", secret)
	p.typeInto("#slack-delay-seconds", "30")
	p.do(
		chromedp.Click(chromedp.CSS("#slack-app-token-remove")),
		chromedp.SetValue(chromedp.CSS("#slack-unmapped-users"), "none"),
	)
	if got := p.text("#slack-app-token-saved"); !strings.Contains(got, "will be removed") {
		t.Errorf("after Remove the app token line reads %q", got)
	}
	p.do(chromedp.Click(chromedp.CSS("#slack-save")))
	p.waitResult("Saved. Slack is on.")
	got := srv.slackConfig(t)
	want := slackConfig{
		Enabled: true, BotToken: "xoxb-...ijkl", AppToken: "", ChannelID: fakeChannel, SigningSecret: slack.Mask(secret),
		DelaySeconds: 30, Mention: "here", UnmappedUsers: "none", FromEnvironment: []string{"mention"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("configuration after Save (-want +got):\n%s", diff)
	}
	if v := eval[string](p, `document.getElementById("slack-signing-secret").value`); v != "" {
		t.Errorf("the signing secret field holds %q after saving, want it emptied", v)
	}
	if got := p.text("#slack-signing-secret-saved"); got != "Saved: "+slack.Mask(secret) {
		t.Errorf("saved signing secret shown as %q", got)
	}
	if got := p.text("#slack-state"); !strings.Contains(got, "over HTTP") {
		t.Errorf("state line %q after enabling over HTTP", got)
	}

	// Escape closes the dialog and gives the focus back to the button.
	p.do(chromedp.KeyEvent(kb.Escape))
	p.waitJS(`!document.getElementById("slack-dialog").open && document.activeElement.id === "slack-btn"`)
}

// TestSlackSettingsServerError: what the server refuses is shown at the
// field it names (here: a token cannot be saved without a secret key).
func TestSlackSettingsServerError(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{noSecretKey: true})
	p := openPage(t, srv)
	p.openSlack()
	p.typeInto("#slack-bot-token", fakeBotToken)
	p.do(chromedp.Click(chromedp.CSS("#slack-save")))
	p.waitJS(`document.getElementById("slack-bot-token-err").textContent.startsWith("Bot token cannot be saved")`)
	p.waitResult("The settings were not saved")
	if got := eval[string](p, `document.activeElement.id`); got != "slack-bot-token" {
		t.Errorf("focus on #%s, want the bot token", got)
	}
	if c := srv.slackConfig(t); c.BotToken != "" {
		t.Errorf("bot token %q saved", c.BotToken)
	}
}

// TestSlackSettingsForAdminsOnly: a responder has no Slack button (and
// the API refuses them); an admin has one.
func TestSlackSettingsForAdminsOnly(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true})
	carol := openSignIn(t, srv)
	carol.signIn("carol", carolPassword)
	carol.waitSignedIn("carol")
	carol.waitJS(`!document.getElementById("slack-btn").hidden`)

	bob := openSignIn(t, srv)
	bob.signIn("bob", bobPassword)
	bob.waitSignedIn("bob")
	if got := eval[int](bob, `fetch("/api/human-feedback/slack/config").then(r => r.status)`); got != http.StatusForbidden {
		t.Errorf("GET the Slack config as bob: %d, want 403", got)
	}
	if !eval[bool](bob, `document.getElementById("slack-btn").hidden && !document.getElementById("slack-dialog").open`) {
		t.Error("bob, a responder, sees the Slack settings")
	}
	// Signing out takes the button away from the admin too.
	carol.do(chromedp.Click(chromedp.CSS("#sign-out")))
	carol.waitJS(`!document.getElementById("view-login").hidden && document.getElementById("slack-btn").hidden`)
}

// TestSlackSettingsLook runs axe-core on the open dialog in light and
// dark, checks it at 375 px, and with HITL_UPDATE_SCREENSHOTS=1 writes
// docs/slack-settings.png.
func TestSlackSettingsLook(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{slack: slack.Settings{Mention: slack.MentionHere}})
	srv.saveSlackConfig(t, map[string]any{"enabled": true, "bot_token": fakeBotToken, "channel_id": fakeChannel,
		"signing_secret": "8f742231b10e8888abcd99yyyzzz85a5"})
	srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Deploy build 1432 to production?", "source_agent": "deployer"})
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			p := openPage(t, srv, chromedp.EmulateViewport(960, 1560), emulateMedia(scheme))
			p.waitJS(`document.querySelector(".card")`)
			p.openSlack()
			p.do(chromedp.Click(chromedp.CSS("#slack-test")))
			p.waitResult("Slack connection test successful!")
			checkAxe(t, p)
			if scheme == "light" && os.Getenv("HITL_UPDATE_SCREENSHOTS") != "" {
				p.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
				png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatalf("screenshot: %v", err)
				}
				writeDoc(t, "slack-settings.png", png)
			}
		})
	}
	t.Run("phone", func(t *testing.T) {
		p := openPage(t, srv, chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile), emulateMedia("light"))
		p.openSlack()
		checkNarrow(t, p)
	})
}
