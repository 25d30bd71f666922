package email

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
)

// Escalation mails: a fired step that tells email mails its people
// again, as a new round of rows (the step's index plus one), each with
// fresh single-use links. A reminder mails the current targets; a step
// that adds targets mails the people it added (and, when it also
// reminds, everyone). The engine writes a row per step
// (hitl.ChannelEmailReminder) with the step's event, and the worker claims
// those rows and turns each into its round, so the mails go out once the
// step fired, however the process that fired it ended.

// escalated is the broker's escalation handler: it wakes the worker,
// which finds the step's row.
func (s *Service) escalated(_ context.Context, ev *hitl.Event) {
	if d, err := hitl.ParseEscalationDetail(ev); err == nil && d.Tells(hitl.ChannelEmail) {
		s.intake.Wake()
	}
}

// workReminders claims the step rows due now and schedules each one's
// round of mails.
func (s *Service) workReminders(ctx context.Context, cfg Config) error {
	for {
		now := s.now()
		rows, err := s.store.ClaimNotifications(ctx, hitl.ChannelEmailReminder, now, now.Add(lease), claimBatch)
		if err != nil {
			return err
		}
		for _, n := range rows {
			s.remind(ctx, cfg, n)
		}
		if len(rows) < claimBatch || ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// remind schedules the round of mails of a claimed step row and marks
// the row sent: skipped when the question ended, turned email off or
// there is no one to mail. Scheduling a round twice (a server that
// stopped in between) inserts nothing more: a round has one row per
// person.
func (s *Service) remind(ctx context.Context, cfg Config, n *hitl.Notification) {
	in := n.Interaction
	state := hitl.NotificationSkipped
	if in != nil && in.Status == hitl.StatusPending && !in.EmailOff() {
		rows, err := s.roundRows(ctx, cfg, in, in.StepDetail(n.Round))
		if err != nil {
			s.log.Error("find who to remind by mail", "interaction_id", n.InteractionID, "error", err)
			return // the lease runs out and the row is taken up again
		}
		if len(rows) > 0 {
			if _, err := s.store.ScheduleNotifications(ctx, rows); err != nil {
				s.log.Error("schedule reminder mails", "interaction_id", n.InteractionID, "error", err)
				return
			}
			state = hitl.NotificationSent
		}
	}
	done := *n
	done.State, done.DueAt, done.Attempts = state, time.Time{}, 0
	if _, err := s.store.UpdateNotification(ctx, &done, n.State, n.Attempts); err != nil {
		s.log.Error("mark a reminder's step done", "interaction_id", n.InteractionID, "step", n.Round, "error", err)
	}
}

// roundRows returns the mail rows of step d of in: one per person it
// tells, round d.Step+1, due now.
func (s *Service) roundRows(ctx context.Context, cfg Config, in *hitl.Interaction, d hitl.EscalationDetail) ([]*hitl.Notification, error) {
	who := in
	if d.Added != nil && !d.Remind {
		added := *in
		added.Targets = d.Added
		who = &added
	}
	rs, err := recipients(ctx, s.ids, who, cfg)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var rows []*hitl.Notification
	for _, r := range rs {
		rows = append(rows, &hitl.Notification{
			ID: uuid.NewString(), InteractionID: in.ID, Channel: hitl.ChannelEmail,
			Recipient: r.address, Responder: r.user, Round: d.Step + 1, State: hitl.NotificationScheduled,
			DueAt: now, CreatedAt: now,
		})
	}
	return rows, nil
}
