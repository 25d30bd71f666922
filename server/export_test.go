package server

import "time"

// SetParkSweep sets how often s looks for agents that hung up on parked
// long-polls, for tests. Call it before Listener.
func SetParkSweep(s *Server, every time.Duration) { s.parkSweep = every }

// SetHeldWaits sets how many long-polls that could be parked wait in
// their handlers instead, for tests: 0 parks every one.
func SetHeldWaits(s *Server, n int) { s.held.limit = int64(n) }

// SetBodyTimeout sets how long a request body may take to arrive, for
// tests.
func SetBodyTimeout(s *Server, d time.Duration) { s.bodyTimeout = d }

// Routes returns the patterns of every route registered on s's router, in
// the order routes registered them.
func Routes(s *Server) []string { return append([]string(nil), s.mux.patterns...) }
