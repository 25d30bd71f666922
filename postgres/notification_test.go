package postgres_test

import (
	"testing"

	"github.com/hitl-sh/hitl/postgres/pgtest"
	"github.com/hitl-sh/hitl/storetest"
)

func TestNotificationStore(t *testing.T) {
	storetest.RunNotifications(t, func(t *testing.T) storetest.NotificationStore {
		return open(t, pgtest.Name(t), nil)
	}, func(t *testing.T) (storetest.NotificationStore, storetest.NotificationStore) {
		schema := pgtest.Name(t)
		return open(t, schema, nil), open(t, schema, nil)
	})
}
