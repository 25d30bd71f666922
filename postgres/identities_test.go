package postgres_test

import (
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/postgres/pgtest"
	"github.com/hitl-sh/hitl/storetest"
)

func TestIdentities(t *testing.T) {
	storetest.RunIdentities(t, func(t *testing.T) hitl.Identities {
		return open(t, pgtest.Name(t), nil)
	})
}
