package server

import "net/http"

// routeMux is the server's router: an http.ServeMux that also remembers
// the pattern of every route registered on it, so that tests can hold the
// routes against the OpenAPI document.
type routeMux struct {
	*http.ServeMux
	patterns []string
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
