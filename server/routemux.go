package server

import (
	"net/http"
	"path"
	"strings"
)

// routeMux is the server's router: an http.ServeMux that also remembers
// the pattern of every route registered on it, so that tests can hold the
// routes against the OpenAPI document, and which of them are signed.
type routeMux struct {
	*http.ServeMux
	patterns []string
	// signed routes the requests that their sender signs, and their
	// handler checks, rather than this server authenticates (see
	// HandleSigned); nil while there are none.
	signed *http.ServeMux
	// signedPaths holds the paths of the signed routes, so that other
	// requests skip the lookup in signed.
	signedPaths map[string]bool
}

func newRouteMux() *routeMux {
	return &routeMux{ServeMux: http.NewServeMux()}
}

// Handle registers h for pattern.
func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// HandleFunc registers fn for pattern.
func (m *routeMux) HandleFunc(pattern string, fn func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, fn)
}

// HandleSigned registers h for pattern as a signed route: signed, not
// authenticated. Its requests carry their sender's signature, which h
// checks, and no credentials of this server's: they are served before
// authentication and cross-origin protection (see signedRoute).
func (m *routeMux) HandleSigned(pattern string, h http.Handler) {
	m.Handle(pattern, h)
	if m.signed == nil {
		m.signed, m.signedPaths = http.NewServeMux(), map[string]bool{}
	}
	m.signed.Handle(pattern, h)
	p := pattern
	if _, after, ok := strings.Cut(pattern, " "); ok {
		p = after
	}
	m.signedPaths[p] = true
}

// signedRoute returns the handler of the signed route that r is for, or
// nil when r is for none.
func (m *routeMux) signedRoute(r *http.Request) http.Handler {
	if m.signed == nil {
		return nil
	}
	// A path the mux would clean (and redirect) is looked up too.
	if p := r.URL.Path; !m.signedPaths[p] && path.Clean(p) == p {
		return nil
	}
	if h, pattern := m.signed.Handler(r); pattern != "" {
		return h
	}
	return nil
}
