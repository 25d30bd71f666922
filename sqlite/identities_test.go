package sqlite_test

import (
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/storetest"
)

func TestIdentities(t *testing.T) {
	storetest.RunIdentities(t, func(t *testing.T) hitl.Identities {
		return open(t, tempPath(t), nil)
	})
}

func TestIdentitiesMemory(t *testing.T) {
	storetest.RunIdentities(t, func(t *testing.T) hitl.Identities {
		return open(t, ":memory:", nil)
	})
}
