package postgres_test

import (
	"testing"

	"github.com/hitl-sh/hitl/postgres/pgtest"
	"github.com/hitl-sh/hitl/storetest"
)

func TestWebhookStore(t *testing.T) {
	storetest.RunWebhook(t, func(t *testing.T) storetest.WebhookStore {
		return open(t, pgtest.Name(t), nil)
	}, func(t *testing.T) (storetest.WebhookStore, storetest.WebhookStore) {
		schema := pgtest.Name(t)
		return open(t, schema, nil), open(t, schema, nil)
	})
}
