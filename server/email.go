package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/hitl-sh/hitl"
)

// The email channel's routes:
//
//	GET  /api/v1/email/config  the configuration, the SMTP password masked (admins)
//	POST /api/v1/email/config  change it; fields left out keep theirs (admins)
//	POST /api/v1/email/test    send a test mail, with the saved settings or the body's, unsaved (admins)
//	GET  /email/answer         a mail link's confirmation page
//	POST /email/answer         confirm it: the answer is recorded
//
// The links in mail carry their own credential (a signed token), so their
// pages are served before this server's authentication, as signed routes.

// EmailChannel is the email channel as the server serves it (the email
// package's *Service).
type EmailChannel interface {
	// Config returns the configuration in effect, masked.
	Config(ctx context.Context) (hitl.EmailConfigView, error)
	// SetConfig applies u to the stored configuration.
	SetConfig(ctx context.Context, u hitl.EmailConfigUpdate) (hitl.EmailConfigView, error)
	// Test sends a test mail to to ("" for the caller's own address),
	// with u laid over the saved configuration when not nil.
	Test(ctx context.Context, u *hitl.EmailConfigUpdate, to string) (hitl.EmailTestResult, error)
	// LinkHandler serves the pages the links in mail lead to.
	LinkHandler() http.Handler
}

func (s *Server) emailRoutes() {
	s.mux.HandleFunc("GET /api/v1/email/config", s.handle(s.handleEmailConfig))
	s.mux.HandleFunc("POST /api/v1/email/config", s.handle(s.handleEmailSetConfig))
	s.mux.HandleFunc("POST /api/v1/email/test", s.handle(s.handleEmailTest))
	links := s.email.LinkHandler()
	s.mux.HandleSigned("GET /email/answer", links)
	s.mux.HandleSigned("POST /email/answer", links)
}

func (s *Server) handleEmailConfig(w http.ResponseWriter, r *http.Request) error {
	v, err := s.email.Config(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) handleEmailSetConfig(w http.ResponseWriter, r *http.Request) error {
	var u hitl.EmailConfigUpdate
	if err := decodeJSON(w, r, &u); err != nil {
		return err
	}
	v, err := s.email.SetConfig(r.Context(), u)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// emailTestBody is POST /api/v1/email/test's body: settings to try
// (unsaved) and, optionally, where to send the test mail.
type emailTestBody struct {
	hitl.EmailConfigUpdate
	To string `json:"to"`
}

func (s *Server) handleEmailTest(w http.ResponseWriter, r *http.Request) error {
	data, err := readBody(w, r)
	if err != nil {
		return err
	}
	var u *hitl.EmailConfigUpdate
	var to string
	if strings.TrimSpace(string(data)) != "" {
		var b emailTestBody
		if err := unmarshalBody(data, &b); err != nil {
			return err
		}
		u, to = &b.EmailConfigUpdate, b.To
	}
	res, err := s.email.Test(r.Context(), u, to)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
