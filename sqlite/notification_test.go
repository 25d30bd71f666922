package sqlite_test

import (
	"testing"

	"github.com/hitl-sh/hitl/storetest"
)

func TestNotificationStore(t *testing.T) {
	storetest.RunNotifications(t, func(t *testing.T) storetest.NotificationStore {
		return open(t, tempPath(t), nil)
	}, func(t *testing.T) (storetest.NotificationStore, storetest.NotificationStore) {
		path := tempPath(t)
		return open(t, path, nil), open(t, path, nil)
	})
}
