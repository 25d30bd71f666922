package server

import (
	"net/http"
	"strings"

	"github.com/hitl-sh/hitl/slack"
)

// The first seed's Slack configuration routes, for admins (the Slack
// channel checks the caller's role):
//
//	GET  /api/human-feedback/slack/config  the configuration, secrets masked
//	POST /api/human-feedback/slack/config  change it (fields left out keep theirs)
//	POST /api/human-feedback/slack/test    check settings against Slack, unsaved
//
// Slack's own requests (/slack/events, /slack/interactivity) are signed by
// Slack rather than authenticated, so hitl serve routes them to the
// channel before this server's authentication.

func (s *Server) handleSlackConfig(w http.ResponseWriter, r *http.Request) error {
	v, err := s.slack.Config(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) handleSlackSetConfig(w http.ResponseWriter, r *http.Request) error {
	var u slack.ConfigUpdate
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
	var u *slack.ConfigUpdate
	if strings.TrimSpace(string(data)) != "" {
		u = new(slack.ConfigUpdate)
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
