package broker

import "github.com/hitl-sh/hitl"

// PendingCounts returns b's own counts of pending questions once they are
// loaded from the store, and false before.
func PendingCounts(b *Broker) ([]hitl.CountGroup, bool) { return b.pending.read() }

// PendingCountsLoaded is closed once b's counts are loaded.
func PendingCountsLoaded(b *Broker) <-chan struct{} { return b.pending.loaded }

// StoreOf returns b's store.
func StoreOf(b *Broker) hitl.Store { return b.store }
