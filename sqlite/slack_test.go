package sqlite_test

import (
	"testing"

	"github.com/hitl-sh/hitl/storetest"
)

func TestSlackStore(t *testing.T) {
	storetest.RunSlack(t, func(t *testing.T) storetest.SlackStore {
		return open(t, tempPath(t), nil)
	}, func(t *testing.T) (storetest.SlackStore, storetest.SlackStore) {
		path := tempPath(t)
		return open(t, path, nil), open(t, path, nil)
	})
}

func TestSlackStoreMemory(t *testing.T) {
	storetest.RunSlack(t, func(t *testing.T) storetest.SlackStore {
		return open(t, ":memory:", nil)
	}, nil)
}
