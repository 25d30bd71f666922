package sqlite

// WritesTaken returns how many write transactions s has queued.
func (s *Store) WritesTaken() int64 {
	s.wq.mu.Lock()
	defer s.wq.mu.Unlock()
	return s.wq.taken
}
