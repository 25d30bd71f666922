package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/hitl-sh/hitl"
)

// Bounds of a stream's session filter.
const (
	maxStreamSessions = 100 // session_id values per stream
	maxSessionIDLen   = 256 // bytes per value
)

// streamFilter is what a live stream's client asked to see: every
// interaction it may see, or with ?session_id=S (repeatable) only those
// of the sessions named, as the AI-Parrot HITL contract's chat subscribes
// per session. Outcomes (hitl:cancel, hitl:resolved) follow their
// questions: a client sees an interaction's whole life or none of it.
type streamFilter struct {
	sessions map[string]bool // nil: every session
}

// parseStreamFilter reads the session_id parameters of r.
func parseStreamFilter(r *http.Request) (streamFilter, error) {
	vals := r.URL.Query()["session_id"]
	if len(vals) == 0 {
		return streamFilter{}, nil
	}
	if len(vals) > maxStreamSessions {
		return streamFilter{}, hitl.Errorf(hitl.EINVALID, "at most %d session_id parameters; got %d", maxStreamSessions, len(vals))
	}
	f := streamFilter{sessions: make(map[string]bool, len(vals))}
	for _, v := range vals {
		if v == "" || len(v) > maxSessionIDLen {
			return streamFilter{}, hitl.Errorf(hitl.EINVALID, "session_id must be 1 to %d bytes", maxSessionIDLen)
		}
		f.sessions[v] = true
	}
	return f, nil
}

// all reports whether the filter lets every interaction through.
func (f streamFilter) all() bool { return f.sessions == nil }

// match reports whether the client asked to see in.
func (f streamFilter) match(in *hitl.Interaction) bool {
	return f.sessions == nil || (in != nil && f.sessions[in.SessionID])
}

// shows reports whether a client with caller's rights and filter f is told
// about ev.
func (f streamFilter) shows(caller hitl.Caller, ev *hitl.Event) bool {
	return hitl.CanSeeEvent(caller, ev) && f.match(ev.Interaction)
}

// resumePoint reads where a client resumes a stream: the Last-Event-ID
// header (EventSource sends it on reconnect) when lastEventID is set, then
// the query parameter named param. resume is false when none is given.
func resumePoint(r *http.Request, param string, lastEventID bool) (after int64, resume bool, err error) {
	v := ""
	if lastEventID {
		v = strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	}
	if v == "" {
		v = strings.TrimSpace(r.URL.Query().Get(param))
	}
	if v == "" {
		return 0, false, nil
	}
	after, err = strconv.ParseInt(v, 10, 64)
	if err != nil || after < 0 {
		what := param
		if lastEventID {
			what = "Last-Event-ID"
		}
		return 0, false, hitl.Errorf(hitl.EINVALID, "%s must be the seq of an event from this stream (a non-negative integer)", what)
	}
	return after, true, nil
}
