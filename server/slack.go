package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/hitl-sh/hitl"
)

// The human_feedback contract's Slack configuration routes, for admins
// (the Slack channel checks the caller's role):
//
//	GET  /api/human-feedback/slack/config  the configuration, secrets masked
//	POST /api/human-feedback/slack/config  change it (fields left out keep theirs)
//	POST /api/human-feedback/slack/test    check settings against Slack, unsaved
//
// Slack's own requests (POST /slack/events, POST /slack/interactivity)
// are signed by Slack rather than authenticated: they are served before
// this server's authentication, and the channel checks their signature.

// SlackChannel is the Slack channel as the server serves it (the slack
// package's *Service): its configuration API, and the handlers of the
// requests Slack signs.
type SlackChannel interface {
	// Config returns the configuration in effect, masked.
	Config(ctx context.Context) (hitl.SlackConfigView, error)
	// SetConfig applies u to the stored configuration.
	SetConfig(ctx context.Context, u hitl.SlackConfigUpdate) (hitl.SlackConfigView, error)
	// Test checks the saved configuration, with u laid over it when not
	// nil, against Slack.
	Test(ctx context.Context, u *hitl.SlackConfigUpdate) (hitl.SlackTestResult, error)
	// EventsHandler serves Slack's Events API (POST /slack/events).
	EventsHandler() http.Handler
	// InteractivityHandler serves Slack's interactivity requests (POST
	// /slack/interactivity).
	InteractivityHandler() http.Handler
}

func (s *Server) handleSlackConfig(w http.ResponseWriter, r *http.Request) error {
	v, err := s.slack.Config(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) handleSlackSetConfig(w http.ResponseWriter, r *http.Request) error {
	var u hitl.SlackConfigUpdate
	if err := decodeJSON(w, r, &u); err != nil {
		return err
	}
	v, err := s.slack.SetConfig(r.Context(), u)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// handleSlackTest checks the saved configuration, or the settings in the
// body laid over it (so a settings form can be tested before saving).
func (s *Server) handleSlackTest(w http.ResponseWriter, r *http.Request) error {
	data, err := readBody(w, r)
	if err != nil {
		return err
	}
	var u *hitl.SlackConfigUpdate
	if strings.TrimSpace(string(data)) != "" {
		u = new(hitl.SlackConfigUpdate)
		if err := unmarshalBody(data, u); err != nil {
			return err
		}
	}
	res, err := s.slack.Test(r.Context(), u)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
