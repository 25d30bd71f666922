package storetest

import (
	"fmt"
	"sort"
	"sync"
	"testing"
)

// storeTest is one named test of a conformance suite over stores of type S.
type storeTest[S any] struct {
	name string
	fn   func(t *testing.T, s S)
}

// runSuite runs each test in parallel on a new store from newStore and,
// when shared is not nil, across (named acrossName) on two stores over one
// new database (two processes).
func runSuite[S any](t *testing.T, tests []storeTest[S], newStore func(t *testing.T) S,
	shared func(t *testing.T) (S, S), acrossName string, across func(t *testing.T, a, b S)) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
	if shared != nil {
		t.Run(acrossName, func(t *testing.T) {
			t.Parallel()
			a, b := shared(t)
			across(t, a, b)
		})
	}
}

// claimer claims some due rows and returns their IDs; none when nothing
// is due.
type claimer func() ([]string, error)

// claimOnce runs the claimers concurrently, each until nothing is due,
// and checks that each of the n rows was claimed exactly once.
func claimOnce(t *testing.T, n int, claimers ...claimer) {
	t.Helper()
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for _, claim := range claimers {
		wg.Go(func() {
			for {
				ids, err := claim()
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				if len(ids) == 0 {
					return
				}
				mu.Lock()
				for _, id := range ids {
					seen[id]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("claimed %d distinct rows, want %d", len(seen), n)
	}
	var twice []string
	for id, k := range seen {
		if k != 1 {
			twice = append(twice, fmt.Sprintf("%s×%d", id, k))
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		t.Errorf("rows claimed more than once: %v", twice)
	}
}
