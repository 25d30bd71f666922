// Package pgtest gives each test its own schema in a real PostgreSQL
// database, so tests run in parallel against one server without seeing
// each other's rows or notifications.
//
// The server is $HITL_TEST_POSTGRES, or by default
// postgres://postgres@127.0.0.1:5432/test (trust authentication, as
// test.sh sets up). When that default does not answer, tests are skipped;
// when HITL_TEST_POSTGRES is set, they fail instead.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultDSN is the test server used when HITL_TEST_POSTGRES is unset.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// DSN returns the test server's connection string.
func DSN() string {
	if dsn := os.Getenv("HITL_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	return DefaultDSN
}

var (
	probeOnce sync.Once
	probeErr  error
)

// Connect opens a plain connection to the test server, closed when t
// ends, or skips t (see the package comment).
func Connect(t testing.TB) *pgx.Conn {
	t.Helper()
	skipWithout(t)
	c, err := connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// skipWithout skips t when the default server does not answer and
// HITL_TEST_POSTGRES is unset.
func skipWithout(t testing.TB) {
	t.Helper()
	probeOnce.Do(func() {
		c, err := connect()
		if err == nil {
			c.Close(context.Background())
		}
		probeErr = err
	})
	if probeErr != nil && os.Getenv("HITL_TEST_POSTGRES") == "" {
		t.Skipf("no PostgreSQL at %s (set HITL_TEST_POSTGRES to require one): %v", DefaultDSN, probeErr)
	}
}

func connect() (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, DSN())
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return c, nil
}

// Exec runs sql on a connection of its own.
func Exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	skipWithout(t)
	if err := exec(sql, args...); err != nil {
		t.Fatal(err)
	}
}

func exec(sql string, args ...any) error {
	c, err := connect()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// Name returns the name of a schema for t that does not exist yet, and
// drops it, with everything in it, when t ends.
func Name(t testing.TB) string {
	t.Helper()
	skipWithout(t)
	b := make([]byte, 8)
	rand.Read(b)
	name := "hitl_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		if err := exec("DROP SCHEMA IF EXISTS " + pgx.Identifier{name}.Sanitize() + " CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return name
}

// Schema creates an empty schema for t, dropped when t ends, and returns
// its name.
func Schema(t testing.TB) string {
	t.Helper()
	name := Name(t)
	Exec(t, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize())
	return name
}

// SchemaDSN returns DSN with the search_path set to schema, for code that
// takes only a connection string (such as hitl serve).
func SchemaDSN(schema string) string {
	return WithParam(DSN(), "search_path", schema)
}

// WithParam adds a query parameter to a postgres:// URL or a key=value
// connection string.
func WithParam(dsn, key, value string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set(key, value)
		// libpq URLs take %20 for a space, not +.
		u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
		return u.String()
	}
	return dsn + " " + key + "=" + value
}
