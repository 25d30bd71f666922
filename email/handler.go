package email

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
)

// LinkPath is where the links in mail lead: GET shows a confirmation page,
// POST records the answer. The token travels in the query (?t=) and the
// form, never in the path, so request logs do not hold it.
const LinkPath = "/email/answer"

// maxFormBytes bounds a confirmation's form.
const maxFormBytes = 4 << 10

// linkTimeout bounds handling one link request.
const linkTimeout = 30 * time.Second

// LinkHandler serves LinkPath. It needs no hitl credentials (the link is
// the credential) and refuses cross-origin POSTs.
func (s *Service) LinkHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+LinkPath, s.handleLinkGet)
	mux.HandleFunc("POST "+LinkPath, s.handleLinkPost)
	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.pages.write(w, refused(http.StatusForbidden, "Request refused", "This confirmation came from another site, so it was not recorded."))
	}))
	return csrf.Handler(mux)
}

// linked is a verified link and what it acts on.
type linked struct {
	token  string
	n      *hitl.Notification
	link   link
	option hitl.Option
}

// invalidLink is the page of a link that is not one of ours: forged,
// altered, cut short, or for a question since deleted.
func invalidLink() *page {
	return refused(http.StatusForbidden, "This link is not valid",
		"It may have been cut short or changed on its way. Use the link exactly as it came in the mail, or answer in hitl.")
}

// open verifies token and returns its link, or the page that refuses it.
func (s *Service) open(ctx context.Context, token string) (*linked, *page) {
	l, mac, ok := parseToken(token)
	if !ok {
		return nil, invalidLink()
	}
	n, err := s.store.Notification(ctx, l.notificationID)
	if hitl.ErrorCode(err) == hitl.ENOTFOUND {
		return nil, invalidLink()
	} else if err != nil {
		s.log.Error("read a mail's row", "error", err)
		return nil, problem()
	}
	_, key := s.config()
	if n.Channel != hitl.ChannelEmail || n.Interaction == nil || !verify(key, n, l, mac) {
		return nil, invalidLink()
	}
	opt, ok := n.Interaction.Option(l.option)
	if !ok {
		return nil, invalidLink()
	}
	return &linked{token: token, n: n, link: l, option: opt}, nil
}

// usable returns the page that says why lk can no longer answer, or nil
// when it can.
func (s *Service) usable(ctx context.Context, lk *linked) *page {
	in := lk.n.Interaction
	if !lk.n.UsedAt.IsZero() {
		p := s.outcome(ctx, in.ID, http.StatusConflict, "This link was already used")
		p.Lines = append([]string{"Each link in the mail records one answer."}, p.Lines...)
		return p
	}
	if in.Status != hitl.StatusPending {
		return s.outcome(ctx, in.ID, http.StatusConflict, "")
	}
	if !s.now().Before(lk.link.expires) {
		return refused(http.StatusGone, "This link has expired", "The question's deadline has passed, so it can no longer be answered.")
	}
	return nil
}

func (s *Service) handleLinkGet(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), linkTimeout)
	defer cancel()
	lk, p := s.open(ctx, r.URL.Query().Get("t"))
	if p == nil {
		p = s.usable(ctx, lk)
	}
	if p == nil {
		p = s.confirmPage(lk)
	}
	s.pages.write(w, p)
}

func (s *Service) handleLinkPost(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), linkTimeout)
	defer cancel()
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	token := r.URL.Query().Get("t")
	if err := r.ParseForm(); err == nil && r.PostForm.Get("t") != "" {
		token = r.PostForm.Get("t")
	}
	lk, p := s.open(ctx, token)
	if p == nil {
		p = s.usable(ctx, lk)
	}
	if p == nil {
		p = s.answer(ctx, lk)
	}
	s.pages.write(w, p)
}

// answer records lk's option as its recipient's answer, through the
// engine, and marks the link used.
func (s *Service) answer(ctx context.Context, lk *linked) *page {
	in := lk.n.Interaction
	caller, err := callerFor(ctx, s.ids, lk.n)
	if err != nil {
		if hitl.ErrorCode(err) == hitl.EFORBIDDEN {
			return refused(http.StatusForbidden, "This link can no longer answer", hitl.ErrorMessage(err)+".")
		}
		s.log.Error("find who answers through a mail link", "interaction_id", in.ID, "error", err)
		return problem()
	}
	value, _ := json.Marshal(lk.option.Key)
	_, err = s.b.Respond(hitl.WithCaller(ctx, caller), in.ID, value)
	switch hitl.ErrorCode(err) {
	case "":
	case hitl.ECONFLICT, hitl.EEXPIRED, hitl.ECANCELLED:
		return s.outcome(ctx, in.ID, http.StatusConflict, "")
	case hitl.EFORBIDDEN:
		return refused(http.StatusForbidden, "This link cannot answer this question", hitl.ErrorMessage(err)+".")
	default:
		s.log.Error("record an answer from a mail link", "interaction_id", in.ID, "error", err)
		return problem()
	}
	if _, err := s.store.UseNotification(ctx, lk.n.ID, s.now()); err != nil {
		s.log.Error("mark a mail link used", "interaction_id", in.ID, "error", err)
	}
	s.log.Info("answered from email", "interaction_id", in.ID, "by", caller.Name)
	return &page{
		Kind: pageOK, Title: "Recorded: " + lk.option.Label,
		Lines:    []string{"Your answer was recorded as " + caller.Name + ". You can close this page."},
		Question: in.Question, Inbox: s.inbox(),
	}
}

// confirmPage asks the recipient to confirm lk's option.
func (s *Service) confirmPage(lk *linked) *page {
	in := lk.n.Interaction
	responder, address := lk.n.Responder, lk.n.Recipient
	if responder == "" {
		responder, address = lk.n.Recipient, ""
	}
	return &page{
		Kind: pageConfirm, Title: lk.option.Label + ": " + in.Question,
		Question: in.Question, Agent: agentName(in), Deadline: deadlineText(in.Deadline),
		Option: lk.option.Label, Description: lk.option.Description,
		Responder: responder, Address: address,
		Action: LinkPath, Token: lk.token, Inbox: s.inbox(),
		AddMark: !strings.HasSuffix(strings.TrimSpace(in.Question), "?"),
	}
}

// outcome is the page of a question that has ended (or of a link whose
// answer can no longer be recorded): how it ended and by whom.
func (s *Service) outcome(ctx context.Context, id string, status int, title string) *page {
	in, err := s.b.Get(ctx, id)
	if err != nil {
		s.log.Error("read an interaction for a mail link", "interaction_id", id, "error", err)
		return problem()
	}
	line, ended := outcomeText(in)
	if title == "" {
		title = "This question has ended"
		if !ended {
			title = "This question can no longer be answered here"
		}
	}
	return &page{status: status, Kind: pageOutcome, Title: title, Lines: []string{line}, Question: in.Question, Inbox: s.inbox()}
}

// outcomeText says how in ended, and by whom: the chosen option for
// approval and choices, never a typed answer (it may be a secret).
func outcomeText(in *hitl.Interaction) (string, bool) {
	r := in.Result
	when := func(t time.Time) string { return t.UTC().Format("Mon 2 Jan 2006 15:04 MST") }
	switch in.Status {
	case hitl.StatusAnswered:
		if r == nil {
			return "It was answered.", true
		}
		what := "Answered"
		switch in.Type {
		case hitl.TypeApproval:
			var ok bool
			if json.Unmarshal(r.Value, &ok) == nil {
				what = map[bool]string{true: "Approved", false: "Rejected"}[ok]
			}
		case hitl.TypeSingleChoice:
			var key string
			if json.Unmarshal(r.Value, &key) == nil {
				if o, found := in.Option(key); found {
					what = "Answered “" + o.Label + "”"
				}
			}
		}
		if r.TimedOut {
			return what + " by default at the deadline (" + when(r.RespondedAt) + ").", true
		}
		return what + " by " + r.RespondedBy + " via " + r.Channel + " at " + when(r.RespondedAt) + ".", true
	case hitl.StatusExpired:
		return "It expired unanswered at " + when(in.Deadline) + ".", true
	case hitl.StatusCancelled:
		line := "It was cancelled"
		if r != nil && r.Reason != "" {
			line += ": " + strings.TrimSuffix(r.Reason, ".")
		}
		return line + ".", true
	}
	return "It is still waiting for an answer, but not from this link.", false
}

// problem is the page of a server-side failure.
func problem() *page {
	return &page{status: http.StatusInternalServerError, Kind: pageProblem, Title: "Something went wrong",
		Lines: []string{"Your answer was not recorded. Try the link again in a moment, or answer in hitl."}}
}

// inbox is the web inbox's URL, for links on the pages.
func (s *Service) inbox() string {
	if s.publicURL == "" {
		return ""
	}
	return strings.TrimSuffix(s.publicURL, "/") + "/"
}
