package hitl

// The Slack channel's settings as its API shows and takes them (GET and
// POST /api/human-feedback/slack/config, POST …/slack/test, the
// human_feedback contract's configuration routes, for admins). The HTTP
// server serves them and the Slack channel keeps them; neither knows the
// other.

// SlackConfigView is the configuration in effect: the human_feedback
// contract's fields (enabled, bot_token, app_token, channel_id) and
// hitl's, with every secret masked ("xoxb-...1234").
type SlackConfigView struct {
	Enabled       bool   `json:"enabled"`
	BotToken      string `json:"bot_token"`
	AppToken      string `json:"app_token"`
	ChannelID     string `json:"channel_id"`
	SigningSecret string `json:"signing_secret"`
	DelaySeconds  int    `json:"delay_seconds"`
	Mention       string `json:"mention"`
	UnmappedUsers string `json:"unmapped_users"`
	// Transport is socket_mode, http or none: how Slack reaches hitl.
	Transport string `json:"transport"`
	// Connected reports whether this server's Socket Mode connection is
	// up.
	Connected bool `json:"connected"`
	// FromEnvironment names the fields set by flags or HITL_SLACK_*
	// variables, which win over what is saved.
	FromEnvironment []string `json:"from_environment"`
}

// SlackConfigUpdate changes the stored configuration. A field left out
// keeps its value; a masked secret sent back as SlackConfigView showed it
// keeps the stored secret; "" clears a string.
type SlackConfigUpdate struct {
	Enabled       *bool   `json:"enabled"`
	BotToken      *string `json:"bot_token"`
	AppToken      *string `json:"app_token"`
	ChannelID     *string `json:"channel_id"`
	SigningSecret *string `json:"signing_secret"`
	DelaySeconds  *int    `json:"delay_seconds"`
	Mention       *string `json:"mention"`
	UnmappedUsers *string `json:"unmapped_users"`
}

// SlackTestResult says whether settings work against Slack.
type SlackTestResult struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}
