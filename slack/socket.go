package slack

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// socketRun is one Socket Mode connection's life: started with a context,
// stopped by cancelling it and waiting until it is closed, so that
// reconfiguring never leaves two connections open.
type socketRun struct {
	cancel   context.CancelFunc
	done     chan struct{}
	botToken string
	appToken string
}

// startSocketLocked connects over Socket Mode with cfg's tokens. Callers
// hold applyMu.
func (s *Service) startSocketLocked(cfg Config) {
	client := socketmode.New(s.newAPI(cfg), socketmode.OptionLog(log.New(io.Discard, "", 0)))
	ctx, cancel := context.WithCancel(s.ctx)
	r := &socketRun{cancel: cancel, done: make(chan struct{}), botToken: cfg.BotToken, appToken: cfg.AppToken}
	s.socket = r
	go func() {
		defer close(r.done)
		s.runSocket(ctx, client)
	}()
	s.log.Info("connecting to Slack over Socket Mode")
}

// stopSocketLocked closes the Socket Mode connection and waits until it
// is gone. Callers hold applyMu.
func (s *Service) stopSocketLocked() {
	r := s.socket
	if r == nil {
		return
	}
	r.cancel()
	<-r.done
	s.socket = nil
	s.setOnline(false)
}

func (s *Service) setOnline(on bool) {
	s.mu.Lock()
	s.online = on
	s.mu.Unlock()
}

func (s *Service) socketConnected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.online
}

// runSocket runs the client until ctx ends (or it fails for good, such as
// a revoked token), handling what arrives. RunContext closes its
// connection before it returns.
func (s *Service) runSocket(ctx context.Context, client *socketmode.Client) {
	errc := make(chan error, 1)
	go func() { errc <- client.RunContext(ctx) }()
	for {
		select {
		case ev := <-client.Events:
			s.socketEvent(ctx, client, ev)
		case err := <-errc:
			s.setOnline(false)
			if ctx.Err() == nil {
				s.log.Error("Slack Socket Mode stopped; fix the app token and save the configuration again", "error", err)
			}
			return
		}
	}
}

// socketEvent handles one event of the Socket Mode client. Requests are
// acknowledged at once, except a modal's submission, whose answer may be
// errors to show in it.
func (s *Service) socketEvent(ctx context.Context, client *socketmode.Client, ev socketmode.Event) {
	switch ev.Type {
	case socketmode.EventTypeConnected:
		s.setOnline(true)
		s.log.Info("connected to Slack over Socket Mode")
	case socketmode.EventTypeConnectionError:
		s.setOnline(false)
		var detail error
		if e, ok := ev.Data.(*slack.ConnectionErrorEvent); ok {
			detail = e.ErrorObj
		}
		s.log.Warn("Slack Socket Mode connection failed; retrying", "error", detail)
	case socketmode.EventTypeInvalidAuth:
		s.log.Error("Slack refused the app token (Socket Mode)")
	case socketmode.EventTypeDisconnect:
		s.setOnline(false)
	case socketmode.EventTypeEventsAPI:
		if ev.Request == nil {
			return
		}
		s.ack(ctx, client, ev.Request, nil)
		var outer outerEvent
		if err := json.Unmarshal(ev.Request.Payload, &outer); err != nil || outer.Type != "event_callback" {
			return
		}
		s.goHandle(func(hctx context.Context) {
			if s.firstDelivery(hctx, outer.EventID) {
				s.callbackEvent(hctx, outer.Event)
			}
		})
	case socketmode.EventTypeInteractive:
		cb, ok := ev.Data.(slack.InteractionCallback)
		if !ok || ev.Request == nil {
			return
		}
		req := ev.Request
		switch cb.Type {
		case slack.InteractionTypeViewSubmission:
			s.goHandle(func(hctx context.Context) {
				if resp := s.viewSubmission(hctx, &cb); resp != nil {
					s.ack(ctx, client, req, resp)
				} else {
					s.ack(ctx, client, req, nil)
				}
			})
		case slack.InteractionTypeBlockActions:
			s.ack(ctx, client, req, nil)
			s.goHandle(func(hctx context.Context) { s.blockActions(hctx, &cb) })
		default:
			s.ack(ctx, client, req, nil)
		}
	}
}

// ack acknowledges a Socket Mode request, with a payload when not nil.
func (s *Service) ack(ctx context.Context, client *socketmode.Client, req *socketmode.Request, payload *slack.ViewSubmissionResponse) {
	var err error
	if payload != nil {
		err = client.AckCtx(ctx, req.EnvelopeID, payload)
	} else {
		err = client.AckCtx(ctx, req.EnvelopeID, nil)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		s.log.Warn("acknowledge a Slack request", "error", err)
	}
}
