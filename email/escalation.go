package email

import (
	"context"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
)

// escalate is the broker's escalation handler: a step that tells email
// mails its people again, as a new round of rows (the step's index plus
// one), each with fresh single-use links. A reminder mails the current
// targets; a step that adds targets mails the people it added (and,
// when it also reminds, everyone).
func (s *Service) escalate(ctx context.Context, ev *hitl.Event) {
	d, err := hitl.ParseEscalationDetail(ev)
	in := ev.Interaction
	if err != nil || in == nil || !d.Tells(hitl.ChannelEmail) || in.EmailOff() || in.Status != hitl.StatusPending {
		return
	}
	cfg, _ := s.config()
	if !cfg.usable() {
		return
	}
	who := in
	if d.Added != nil && !d.Remind {
		added := *in
		added.Targets = d.Added
		who = &added
	}
	rs, err := recipients(ctx, s.ids, who, cfg)
	if err != nil {
		s.log.Error("find who to remind by mail", "interaction_id", in.ID, "error", err)
		return
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
	if len(rows) == 0 {
		return
	}
	if _, err := s.store.ScheduleNotifications(ctx, rows); err != nil {
		s.log.Error("schedule reminder mails", "interaction_id", in.ID, "error", err)
		return
	}
	s.intake.Wake()
}
