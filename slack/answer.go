package slack

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// Answers from Slack: button clicks, a select, checkboxes and Submit, modal
// submissions and thread replies. Each maps its token (or thread) to an
// interaction and an option key, and answers through the engine with the
// Slack user's identity (see callerFor), so it is validated and recorded
// exactly once like any other answer. Whoever is too late, or not meant to
// answer, is told so in a message only they see.

// place is where to tell a Slack user something only they see.
type place struct {
	channel, user, thread string
}

// blockActions handles clicks and selections in a posted message.
func (s *Service) blockActions(ctx context.Context, cb *slack.InteractionCallback) {
	cfg, api := s.client()
	if api == nil {
		return
	}
	at := place{channel: cb.Channel.ID, user: cb.User.ID}
	if at.channel == "" {
		at.channel = cb.Container.ChannelID
	}
	for _, a := range cb.ActionCallback.BlockActions {
		if a.ActionID == linkActionID || a.ActionID == "" {
			continue
		}
		act, err := s.store.SlackAction(ctx, a.ActionID)
		if errors.Is(err, hitl.ErrNotFound) {
			continue // not ours (or from a database since reset)
		} else if err != nil {
			s.log.Error("read a Slack action", "error", err)
			s.tell(ctx, api, at, "Your answer could not be recorded; try again, or answer in the web inbox.")
			continue
		}
		switch act.Kind {
		case kindOption:
			s.answer(ctx, api, cfg, at, act.InteractionID, jsonString(act.OptionKey))
		case kindSelect:
			key, ok := s.optionKey(ctx, act.InteractionID, a.SelectedOption.Value)
			if ok {
				s.answer(ctx, api, cfg, at, act.InteractionID, jsonString(key))
			}
		case kindSubmit:
			s.answer(ctx, api, cfg, at, act.InteractionID, s.checked(ctx, act.InteractionID, cb.BlockActionState))
		case kindOpen:
			s.openModal(ctx, api, cfg, at, act, cb.TriggerID)
		}
		// kindCheckboxes: ticking a box only changes the message's state,
		// read when Submit is clicked.
	}
}

// optionKey maps an option's token to its key, if it belongs to id.
func (s *Service) optionKey(ctx context.Context, id, token string) (string, bool) {
	if token == "" {
		return "", false
	}
	o, err := s.store.SlackAction(ctx, token)
	if err != nil || o.Kind != kindOption || o.InteractionID != id {
		return "", false
	}
	return o.OptionKey, true
}

// checked returns the keys of the options checked in a message's state,
// as a JSON array, in the order shown.
func (s *Service) checked(ctx context.Context, id string, state *slack.BlockActionStates) json.RawMessage {
	keys := []string{}
	if state != nil {
		for _, block := range state.Values {
			for _, a := range block {
				for _, o := range a.SelectedOptions {
					if key, ok := s.optionKey(ctx, id, o.Value); ok {
						keys = append(keys, key)
					}
				}
			}
		}
	}
	b, _ := json.Marshal(keys)
	return b
}

// openModal opens the modal that answers act's interaction.
func (s *Service) openModal(ctx context.Context, api *slack.Client, cfg Config, at place, act *hitl.SlackAction, trigger string) {
	in, err := s.interaction(ctx, act.InteractionID)
	if err != nil {
		s.tell(ctx, api, at, s.explain(ctx, act.InteractionID, err))
		return
	}
	if in.Status != hitl.StatusPending {
		s.tell(ctx, api, at, s.explain(ctx, in.ID, hitl.Errorf(hitl.ECONFLICT, "not pending")))
		return
	}
	caller, err := s.callerFor(ctx, api, cfg, at.user)
	if err == nil {
		err = hitl.CanAnswer(caller, in)
	}
	if err != nil {
		s.tell(ctx, api, at, s.explain(ctx, in.ID, err))
		return
	}
	view, ok := answerModal(in, act.Token)
	if in.Type == hitl.TypeAction {
		view, ok = actionModal(in, act.OptionKey, act.Token)
	}
	if !ok {
		s.tell(ctx, api, at, "This one is answered in the web inbox.")
		return
	}
	if _, err := api.OpenViewContext(ctx, trigger, view); err != nil {
		s.log.Error("open a Slack modal", "interaction_id", in.ID, "error", err)
		s.tell(ctx, api, at, "The form could not be opened; try again, or answer in the web inbox.")
	}
}

// viewSubmission handles a submitted modal. It returns the response that
// keeps the modal open with errors, or nil to close it.
func (s *Service) viewSubmission(ctx context.Context, cb *slack.InteractionCallback) *slack.ViewSubmissionResponse {
	if cb.View.CallbackID != callbackAnswer {
		return nil
	}
	cfg, api := s.client()
	if api == nil {
		return nil
	}
	act, err := s.store.SlackAction(ctx, cb.View.PrivateMetadata)
	if err != nil || act.Kind != kindOpen {
		return nil
	}
	in, err := s.interaction(ctx, act.InteractionID)
	if err != nil {
		return nil
	}
	if in.Type == hitl.TypeAction {
		return s.actionSubmission(ctx, api, cfg, cb.User.ID, in, act.OptionKey, cb.View.State)
	}
	value, errs := modalValue(in, cb.View.State)
	if len(errs) > 0 {
		return slack.NewErrorsViewSubmissionResponse(errs)
	}
	at := place{user: cb.User.ID}
	if m, err := s.store.SlackMessage(ctx, in.ID); err == nil {
		at.channel = m.ChannelID
	}
	if err := s.respond(ctx, api, cfg, at.user, in.ID, value); err != nil {
		return slack.NewErrorsViewSubmissionResponse(map[string]string{firstBlock(in): truncate(s.explainPlain(in.ID, err), 300)})
	}
	return nil
}

// explainPlain is explain for a modal's error, which is plain text.
func (s *Service) explainPlain(id string, err error) string {
	switch hitl.ErrorCode(err) {
	case hitl.ECONFLICT, hitl.EEXPIRED, hitl.ECANCELLED:
		return "Too late: this question was already answered, or it ended. See its message in the channel."
	case hitl.EFORBIDDEN:
		if hitl.ErrorMessage(err) == "forbidden: not the intended respondent" {
			return msgNotResponder
		}
		return strings.TrimPrefix(hitl.ErrorMessage(err), "forbidden: ")
	case hitl.EVALUE:
		return "Not accepted: " + hitl.ErrorMessage(err)
	case hitl.ENOTFOUND:
		return "This question no longer exists."
	}
	s.log.Error("record an answer from Slack", "interaction_id", id, "error", err)
	return "Your answer could not be recorded; try again, or answer in the web inbox."
}

// threadReply handles a message: a reply in the thread of a posted
// question answers it.
func (s *Service) threadReply(ctx context.Context, ev *slackevents.MessageEvent) {
	if ev.BotID != "" || ev.User == "" || ev.ThreadTimeStamp == "" || ev.ThreadTimeStamp == ev.TimeStamp {
		return
	}
	if ev.SubType != "" && ev.SubType != "thread_broadcast" {
		return // edits, deletions, joins…
	}
	m, err := s.store.SlackMessageByThread(ctx, ev.Channel, ev.ThreadTimeStamp)
	if errors.Is(err, hitl.ErrNotFound) {
		return
	} else if err != nil {
		s.log.Error("find the question of a Slack thread", "error", err)
		return
	}
	cfg, api := s.client()
	if api == nil {
		return
	}
	text := replyText(ev.Text)
	if text == "" {
		return
	}
	at := place{channel: ev.Channel, user: ev.User, thread: ev.ThreadTimeStamp}
	value := jsonString(text)
	if in := m.Interaction; in != nil && in.Type == hitl.TypeAction {
		var help string
		if value, help = actionReply(in, text); help != "" {
			s.tell(ctx, api, at, help)
			return
		}
	}
	s.answer(ctx, api, cfg, at, m.InteractionID, value)
}

// answer records a Slack user's answer and tells them when it was not.
func (s *Service) answer(ctx context.Context, api *slack.Client, cfg Config, at place, id string, value json.RawMessage) {
	if err := s.respond(ctx, api, cfg, at.user, id, value); err != nil {
		s.tell(ctx, api, at, s.explain(ctx, id, err))
	}
}

// respond answers interaction id as the Slack user, through the engine.
func (s *Service) respond(ctx context.Context, api *slack.Client, cfg Config, user, id string, value json.RawMessage) error {
	caller, err := s.callerFor(ctx, api, cfg, user)
	if err != nil {
		return err
	}
	_, err = s.b.Respond(hitl.WithCaller(ctx, caller), id, value)
	if hitl.ErrorCode(err) == hitl.ENOTFOUND {
		// The engine hides a question from whoever it does not target, but
		// the message is in the channel for all to read: say it is meant
		// for someone else.
		if in, gerr := s.interaction(ctx, id); gerr == nil {
			if aerr := hitl.CanAnswer(caller, in); aerr != nil {
				err = aerr
			}
		}
	}
	switch hitl.ErrorCode(err) {
	case "":
		s.log.Info("answered from Slack", "interaction_id", id, "by", caller.Name)
	case hitl.ECONFLICT, hitl.EEXPIRED, hitl.ECANCELLED:
		// Make sure the message says so, in case its update was missed.
		if n, err := s.store.EndSlackMessages(ctx, id, s.now()); err == nil && n > 0 {
			s.poke()
		}
	}
	return err
}

// msgNotResponder tells a Slack user that a question's targets leave them
// out.
const msgNotResponder = "You are not a responder for this question: it is meant for someone else."

// explain turns a refused answer into a sentence for the Slack user.
func (s *Service) explain(ctx context.Context, id string, err error) string {
	switch hitl.ErrorCode(err) {
	case hitl.ECONFLICT, hitl.EEXPIRED, hitl.ECANCELLED:
		in, gerr := s.interaction(ctx, id)
		if gerr != nil || in.Status == hitl.StatusPending {
			return "This question can no longer be answered."
		}
		if in.Status == hitl.StatusAnswered && (in.Result == nil || !in.Result.TimedOut) {
			return "Already answered: " + outcome(in)
		}
		return "Too late: " + outcome(in)
	case hitl.EFORBIDDEN:
		if hitl.ErrorMessage(err) == "forbidden: not the intended respondent" {
			return msgNotResponder
		}
		return strings.TrimPrefix(hitl.ErrorMessage(err), "forbidden: ")
	case hitl.EVALUE:
		return "That answer was not accepted: " + escape(hitl.ErrorMessage(err))
	case hitl.ENOTFOUND:
		return "This question no longer exists."
	}
	s.log.Error("record an answer from Slack", "interaction_id", id, "error", err)
	return "Your answer could not be recorded; try again, or answer in the web inbox."
}

// tell posts a message only the user sees (chat.postEphemeral).
func (s *Service) tell(ctx context.Context, api *slack.Client, at place, text string) {
	if at.channel == "" || at.user == "" {
		return
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if at.thread != "" {
		opts = append(opts, slack.MsgOptionTS(at.thread))
	}
	if _, err := api.PostEphemeralContext(ctx, at.channel, at.user, opts...); err != nil {
		s.log.Warn("tell a Slack user", "slack_user", at.user, "error", err)
	}
}

// replyMention and replyLink are compiled when first used, as the
// Markdown patterns are.
var (
	replyMention = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*<@[A-Z0-9]+>\s*`) })
	replyLink    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>`) })
)

// replyText turns a Slack message's text back into what was typed: no
// leading mention of the bot, links as written, entities unescaped.
func replyText(text string) string {
	text = replyMention().ReplaceAllString(text, "")
	link := replyLink()
	text = link.ReplaceAllStringFunc(text, func(m string) string {
		sub := link.FindStringSubmatch(m)
		if sub[2] != "" {
			return sub[2]
		}
		return strings.TrimPrefix(sub[1], "mailto:")
	})
	text = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(text)
	return strings.TrimSpace(text)
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
