package broker

import (
	"time"

	"github.com/hitl-sh/hitl"
)

// notPending explains why an interaction can no longer be answered.
func notPending(in *hitl.Interaction) error {
	r := in.Result
	if r == nil {
		r = &hitl.Result{}
	}
	switch in.Status {
	case hitl.StatusAnswered:
		if r.TimedOut {
			return hitl.Errorf(hitl.EEXPIRED, "interaction expired at %s; the default response was used", in.Deadline.Format(time.RFC3339))
		}
		return hitl.Errorf(hitl.ECONFLICT, "interaction already answered by %s via %s", r.RespondedBy, r.Channel)
	case hitl.StatusExpired:
		return hitl.Errorf(hitl.EEXPIRED, "interaction expired at %s", in.Deadline.Format(time.RFC3339))
	case hitl.StatusCancelled:
		return hitl.Errorf(hitl.ECANCELLED, "interaction was cancelled: %s", r.Reason)
	}
	return hitl.Errorf(hitl.ECONFLICT, "interaction is %s", in.Status)
}
