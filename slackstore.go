package hitl

import (
	"context"
	"time"
)

// SlackState is where an interaction's Slack message is in its life.
//
//	scheduled ─claim─▶ posting ─▶ posted ─(interaction ends)─▶ ending ─claim─▶ updating ─▶ closed
//	    │                 │                                                        │
//	    └──(ended first)──┴─▶ skipped            failed ◀─(gave up)────────────────┘
//
// A claimed row (posting, updating) holds a lease until its DueAt: when
// the process holding it dies, the row is claimed again after that.
type SlackState string

// Slack message states.
const (
	SlackScheduled SlackState = "scheduled" // to be posted at DueAt if still pending
	SlackPosting   SlackState = "posting"   // claimed for posting; DueAt ends the lease
	SlackSkipped   SlackState = "skipped"   // ended (or Slack was off) before it was due: nothing posted
	SlackPosted    SlackState = "posted"    // in Slack with live buttons
	SlackEnding    SlackState = "ending"    // the interaction ended: the message is to be updated at DueAt
	SlackUpdating  SlackState = "updating"  // claimed for the update; DueAt ends the lease
	SlackClosed    SlackState = "closed"    // updated to show the outcome
	SlackFailed    SlackState = "failed"    // gave up after repeated errors
)

// SlackMessage is the durable row behind one interaction's Slack message:
// when it is due, where it was posted, and how far it got.
type SlackMessage struct {
	InteractionID string
	State         SlackState
	// DueAt is when the row has work to do (post, retry, update, or a
	// claim's lease running out); zero when it has none.
	DueAt time.Time
	// Attempts counts claims since the row last moved on; a claim's
	// holder passes it back as a fencing token.
	Attempts int
	// ChannelID is the interaction's own channel until posted ("" for the
	// server's), then the channel it was posted to.
	ChannelID string
	// TS is the Slack timestamp of the posted message, which also names
	// its thread.
	TS        string
	CreatedAt time.Time

	// Interaction is filled in by ClaimSlackMessages, SlackMessage and
	// SlackMessageByThread.
	Interaction *Interaction
}

// SlackAction maps an opaque token, carried by a Slack button or option as
// its action_id or value, to what it means: never a label.
type SlackAction struct {
	Token         string
	InteractionID string
	// Kind is what the element does: "option" (choose OptionKey),
	// "select", "checkboxes", "submit", "open" (open a modal).
	Kind      string
	OptionKey string
	CreatedAt time.Time
}

// SlackConfig is the Slack channel's stored configuration. The secrets are
// stored exactly as given: the caller seals (encrypts) them first.
type SlackConfig struct {
	Enabled       bool
	ChannelID     string
	DelaySeconds  int
	Mention       string // "none", "here" or "channel"
	UnmappedUsers string // who may answer without a hitl account: "untargeted" or "none"
	BotToken      string // sealed
	AppToken      string // sealed
	SigningSecret string // sealed
	UpdatedAt     time.Time
}

// SlackStore keeps the Slack channel's durable state: its configuration,
// one message row per interaction, the action tokens of posted messages,
// and the IDs of Slack events already handled. Its rows are what deadlines
// are for the engine: work with a due time, claimed exactly once however
// many processes share the store.
type SlackStore interface {
	// SlackConfig returns the stored configuration, or ENOTFOUND when none
	// was ever saved.
	SlackConfig(ctx context.Context) (*SlackConfig, error)
	// SaveSlackConfig replaces the stored configuration.
	SaveSlackConfig(ctx context.Context, c *SlackConfig) error

	// ScheduleSlackMessages inserts each row that does not exist yet (by
	// interaction) and returns how many it inserted.
	ScheduleSlackMessages(ctx context.Context, ms []*SlackMessage) (int, error)
	// UnscheduledSlackInteractions returns up to limit pending
	// interactions that have no Slack row yet, oldest first.
	UnscheduledSlackInteractions(ctx context.Context, limit int) ([]*Interaction, error)
	// NextSlackDue returns the earliest DueAt of a row with work to do.
	NextSlackDue(ctx context.Context) (due time.Time, ok bool, err error)
	// ClaimSlackMessages claims up to limit rows due at now, earliest
	// first, as a compare-and-set: scheduled and posting rows become
	// posting, ending and updating rows become updating, each with DueAt
	// set to leaseUntil and Attempts incremented. A row is claimed by one
	// caller only, until its lease runs out.
	ClaimSlackMessages(ctx context.Context, now, leaseUntil time.Time, limit int) ([]*SlackMessage, error)
	// UpdateSlackMessage writes m's State, DueAt, Attempts, ChannelID and
	// TS if the row is still in state from with attempts claims (the
	// claim's fencing token), and reports whether it was.
	UpdateSlackMessage(ctx context.Context, m *SlackMessage, from SlackState, attempts int) (bool, error)
	// EndSlackMessages records that interactions ended: of those no longer
	// pending (only id, unless id is ""), scheduled rows become skipped
	// and posted rows become ending, due at now. It returns how many
	// became ending.
	EndSlackMessages(ctx context.Context, id string, now time.Time) (int, error)
	// SlackMessage returns the row of an interaction, or ENOTFOUND.
	SlackMessage(ctx context.Context, interactionID string) (*SlackMessage, error)
	// SlackMessageByThread returns the row of the message posted to
	// channel with timestamp ts, or ENOTFOUND.
	SlackMessageByThread(ctx context.Context, channel, ts string) (*SlackMessage, error)

	// AddSlackActions stores action tokens.
	AddSlackActions(ctx context.Context, as []*SlackAction) error
	// SlackAction returns the action with the token, or ENOTFOUND.
	SlackAction(ctx context.Context, token string) (*SlackAction, error)

	// SeenSlackEvent records a Slack event ID at now and reports whether it
	// is new; IDs older than forgetBefore are forgotten.
	SeenSlackEvent(ctx context.Context, id string, now, forgetBefore time.Time) (bool, error)
}
