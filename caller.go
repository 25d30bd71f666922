package hitl

import "context"

// Channels through which an interaction can be created or answered.
const (
	ChannelAPI     = "api"
	ChannelWeb     = "web"
	ChannelCLI     = "cli"
	ChannelMCP     = "mcp"
	ChannelSlack   = "slack"
	ChannelEmbed   = "embed"   // the <hitl-prompt> element in another site's page
	ChannelTimeout = "timeout" // the default response applied at the deadline
)

// LocalCaller is the identity of every request when authentication is off.
const LocalCaller = "local"

// Caller is who is making a request and through which channel.
type Caller struct {
	Name    string   // user or agent name; "local" when auth is off
	Channel string   // one of the Channel constants
	Groups  []string // groups of a person, for targeting
	// Role decides what the caller may do (see CanSee and friends). The
	// zero Role is trusted in-process code and is not restricted; every
	// caller the server authenticates has a role.
	Role Role
}

type callerKey struct{}

// WithCaller returns a context carrying the caller's identity.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller carried by ctx, or the local caller (an
// admin) on the API channel when there is none.
func CallerFrom(ctx context.Context) Caller {
	if c, ok := ctx.Value(callerKey{}).(Caller); ok {
		return c
	}
	return Caller{Name: LocalCaller, Channel: ChannelAPI, Role: RoleAdmin}
}
