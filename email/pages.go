package email

import (
	_ "embed"
	"html/template"
	"net/http"
)

//go:embed pages.html
var pagesHTML string

// Kinds of link pages.
const (
	pageConfirm = "confirm" // the question and a Confirm button
	pageOK      = "ok"      // the answer was recorded
	pageRefused = "refused" // the link cannot be used, and why
	pageOutcome = "outcome" // the question ended: how and by whom
	pageProblem = "problem" // something failed on the server
)

// page is one link page.
type page struct {
	status int
	Kind   string
	Title  string
	Lines  []string

	// The confirmation's (and others') details.
	Question    string
	Agent       string
	Deadline    string
	Option      string
	Description string
	Responder   string
	Address     string
	Action      string
	Token       string
	Inbox       string
	// AddMark ends the confirmation's heading with a question mark when
	// the question has none.
	AddMark bool
}

// pages renders link pages.
type pages struct {
	t *template.Template
}

func newPages() *pages {
	return &pages{t: template.Must(template.New("pages").Parse(pagesHTML))}
}

// write renders p with headers that keep it out of caches, referrers,
// frames and search engines (its URL is a credential).
func (ps *pages) write(w http.ResponseWriter, p *page) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Robots-Tag", "noindex, nofollow")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	status := p.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_ = ps.t.ExecuteTemplate(w, "page", p)
}

// refused is a page that turns a link down.
func refused(status int, title string, lines ...string) *page {
	return &page{status: status, Kind: pageRefused, Title: title, Lines: lines}
}
