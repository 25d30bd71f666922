package broker

import "github.com/hitl-sh/hitl"

// PendingCounts returns b's own counts of pending questions once they are
// loaded from the store (of those a may see; nil: all), and false before.
func PendingCounts(b *Broker, a *hitl.Audience) ([]hitl.CountGroup, bool) {
	return b.pending.read(a)
}

// PendingCountsLoaded is closed once b's counts are loaded.
func PendingCountsLoaded(b *Broker) <-chan struct{} { return b.pending.loaded }

// StoreOf returns b's store.
func StoreOf(b *Broker) hitl.Store { return b.store }
