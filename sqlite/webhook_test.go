package sqlite_test

import (
	"testing"

	"github.com/hitl-sh/hitl/storetest"
)

func TestWebhookStore(t *testing.T) {
	storetest.RunWebhook(t, func(t *testing.T) storetest.WebhookStore {
		return open(t, tempPath(t), nil)
	}, func(t *testing.T) (storetest.WebhookStore, storetest.WebhookStore) {
		path := tempPath(t)
		return open(t, path, nil), open(t, path, nil)
	})
}
