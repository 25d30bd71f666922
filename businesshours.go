package hitl

import (
	"fmt"
	"time"
)

// businessHours is when an escalation step may fire: between open and
// close (minutes after local midnight) in loc, on weekdays only when
// weekdays is set.
type businessHours struct {
	open, close int
	loc         *time.Location
	weekdays    bool
}

// hours parses the step's only_between, tz and weekdays.
func (s EscalationStep) hours() (businessHours, error) {
	h := businessHours{loc: time.UTC, weekdays: s.Weekdays}
	var oh, om, ch, cm int
	n, err := fmt.Sscanf(s.OnlyBetween, "%d:%d-%d:%d", &oh, &om, &ch, &cm)
	if err != nil || n != 4 || !validClock(oh, om) || !validClock(ch, cm) {
		return h, fmt.Errorf("only_between must be HH:MM-HH:MM, such as \"09:00-18:00\"; got %q", s.OnlyBetween)
	}
	h.open, h.close = oh*60+om, ch*60+cm
	if h.open >= h.close {
		return h, fmt.Errorf("only_between must open before it closes on the same day; got %q", s.OnlyBetween)
	}
	if s.TZ != "" {
		if h.loc, err = time.LoadLocation(s.TZ); err != nil {
			return h, fmt.Errorf("tz must be an IANA time zone such as \"Europe/Berlin\"; got %q", s.TZ)
		}
	}
	return h, nil
}

// validClock reports whether h:m is a time of day (24:00 closes a day).
func validClock(h, m int) bool {
	return h >= 0 && m >= 0 && m < 60 && (h < 24 || h == 24 && m == 0)
}

// next returns t when it falls within the hours, else the next opening.
// Openings are local wall-clock times, so they stay put across daylight
// saving changes.
func (h businessHours) next(t time.Time) time.Time {
	lt := t.In(h.loc)
	y, m, d := lt.Date()
	for i := range 8 { // a week and a day always hold a weekday
		day := time.Date(y, m, d+i, 0, 0, 0, 0, h.loc)
		if h.weekdays && (day.Weekday() == time.Saturday || day.Weekday() == time.Sunday) {
			continue
		}
		open := h.at(y, m, d+i, h.open)
		if !t.Before(h.at(y, m, d+i, h.close)) {
			continue
		}
		if t.Before(open) {
			return open
		}
		return t
	}
	return t // unreachable with a valid window
}

// at returns the local time minutes after midnight of day y-m-d.
func (h businessHours) at(y int, m time.Month, d, minutes int) time.Time {
	return time.Date(y, m, d, minutes/60, minutes%60, 0, 0, h.loc)
}
