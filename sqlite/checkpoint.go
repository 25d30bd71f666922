package sqlite

import (
	"context"
	"sync"
	"time"
)

// Checkpoints. In WAL mode a commit appends pages to the WAL, and a
// checkpoint copies them back into the database file and syncs it. SQLite
// runs one by itself inside the commit that takes the WAL past
// wal_autocheckpoint pages (1,000 by default), so every so often one
// writer's commit, and every write batched with it, waits for a copy and an
// extra fsync. Instead, a goroutine of the store runs a PASSIVE checkpoint
// (which never blocks writers or readers) on a reader connection shortly
// after writes, off the commit path. The writer's own autocheckpoint stays
// as a backstop, at a threshold high enough not to fire while the
// checkpointer keeps up.
const (
	// checkpointAfter is how long after a write the checkpointer runs, so
	// that one checkpoint covers the writes of a busy moment.
	checkpointAfter = 100 * time.Millisecond
	// backstopPages is the writer's wal_autocheckpoint.
	backstopPages = 10_000
	// checkpointTimeout bounds one checkpoint.
	checkpointTimeout = 30 * time.Second
)

// checkpointer runs the store's background checkpoints.
type checkpointer struct {
	kick     chan struct{} // a write was committed
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	// observe, when set (by tests, before the first write), is told how
	// many WAL pages there were and how many were checkpointed.
	observe func(logPages, done int)
}

// startCheckpointer starts the background checkpoints.
func (s *Store) startCheckpointer() {
	s.cp = &checkpointer{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.checkpointLoop()
}

// stopCheckpointer stops the background checkpoints, if started. Later
// writes (there should be none) are no longer checkpointed in the
// background.
func (s *Store) stopCheckpointer() {
	if s.cp == nil {
		return
	}
	s.cp.stopOnce.Do(func() { close(s.cp.stop) })
	<-s.cp.done
}

// wrote tells the checkpointer that a commit added to the WAL.
func (s *Store) wrote() {
	if s.cp == nil {
		return
	}
	select {
	case s.cp.kick <- struct{}{}:
	default:
	}
}

func (s *Store) checkpointLoop() {
	defer close(s.cp.done)
	wait := time.NewTimer(time.Hour)
	defer wait.Stop()
	for {
		select {
		case <-s.cp.stop:
			return
		case <-s.cp.kick:
		}
		wait.Reset(checkpointAfter)
		select {
		case <-s.cp.stop:
			return
		case <-wait.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), checkpointTimeout)
		var busy, logPages, done int
		err := s.r.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logPages, &done)
		cancel()
		if err != nil {
			s.log.Warn("background checkpoint failed", "path", s.path, "error", err)
		} else if s.cp.observe != nil {
			s.cp.observe(logPages, done)
		}
	}
}
