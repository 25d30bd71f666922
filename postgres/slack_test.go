package postgres_test

import (
	"testing"

	"github.com/hitl-sh/hitl/postgres/pgtest"
	"github.com/hitl-sh/hitl/storetest"
)

func TestSlackStore(t *testing.T) {
	storetest.RunSlack(t, func(t *testing.T) storetest.SlackStore {
		return open(t, pgtest.Name(t), nil)
	}, func(t *testing.T) (storetest.SlackStore, storetest.SlackStore) {
		schema := pgtest.Name(t)
		return open(t, schema, nil), open(t, schema, nil)
	})
}
