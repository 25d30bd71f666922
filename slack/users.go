package slack

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
)

const (
	// userTTL is how long a Slack user's email is remembered.
	userTTL = 10 * time.Minute
	// userFailTTL is how long a failed users.info is remembered, so a
	// missing scope is not asked about on every click.
	userFailTTL = time.Minute
	// maxCachedUsers bounds the cache; it is cleared beyond.
	maxCachedUsers = 10000
)

// cachedUser is what users.info said about a Slack user.
type cachedUser struct {
	email   string
	bot     bool
	expires time.Time
}

// userCache remembers Slack users' emails for a while.
type userCache struct {
	mu sync.Mutex
	m  map[string]cachedUser
}

// slackUser returns what Slack says about a user: email and whether it is
// a bot. users.info needs the users:read and users:read.email scopes;
// without them every Slack user is unmapped.
func (s *Service) slackUser(ctx context.Context, api *slack.Client, id string) cachedUser {
	now := s.now()
	s.users.mu.Lock()
	u, ok := s.users.m[id]
	s.users.mu.Unlock()
	if ok && now.Before(u.expires) {
		return u
	}
	info, err := api.GetUserInfoContext(ctx, id)
	if err != nil {
		s.log.Warn("look up a Slack user (needs the users:read and users:read.email scopes); treating them as unmapped", "slack_user", id, "error", err)
		u = cachedUser{expires: now.Add(userFailTTL)}
	} else {
		u = cachedUser{email: strings.TrimSpace(info.Profile.Email), bot: info.IsBot || info.Deleted, expires: now.Add(userTTL)}
	}
	s.users.mu.Lock()
	if len(s.users.m) >= maxCachedUsers {
		clear(s.users.m)
	}
	s.users.m[id] = u
	s.users.mu.Unlock()
	return u
}

// callerFor returns the caller a Slack user answers as: the hitl user
// with the same email (a password user, or one from the OpenID provider,
// whose groups are the provider's as of their last sign-in), with that
// user's groups, or a refusal when that user is disabled; or, unmapped, the
// pseudo-user "slack:<id>", who may answer only what targets no one in
// particular (or nothing, when unmapped users are not allowed). Either
// way the role is responder: Slack is a channel for people to answer on.
func (s *Service) callerFor(ctx context.Context, api *slack.Client, cfg Config, userID string) (hitl.Caller, error) {
	if userID == "" {
		return hitl.Caller{}, hitl.Errorf(hitl.EFORBIDDEN, "this Slack event has no user")
	}
	u := s.slackUser(ctx, api, userID)
	if u.bot {
		return hitl.Caller{}, hitl.Errorf(hitl.EFORBIDDEN, "bots cannot answer")
	}
	if u.email != "" && s.ids != nil {
		users, err := s.ids.Users(ctx)
		if err != nil {
			return hitl.Caller{}, fmt.Errorf("list hitl users: %w", err)
		}
		for _, h := range users {
			if h.Email == "" || !strings.EqualFold(strings.TrimSpace(h.Email), u.email) {
				continue
			}
			if h.Disabled {
				return hitl.Caller{}, hitl.Errorf(hitl.EFORBIDDEN, "you are not a responder for this question: your hitl user is disabled")
			}
			return hitl.Caller{Name: h.Name, Groups: h.Groups, Role: hitl.RoleResponder, Channel: hitl.ChannelSlack}, nil
		}
	}
	if cfg.UnmappedUsers == UnmappedNone {
		return hitl.Caller{}, hitl.Errorf(hitl.EFORBIDDEN,
			"you are not a responder for this question: your Slack account is not linked to a hitl user (hitl matches them by email address); answer in the web inbox")
	}
	return hitl.Caller{Name: "slack:" + userID, Role: hitl.RoleResponder, Channel: hitl.ChannelSlack}, nil
}
