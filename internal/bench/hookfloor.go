package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// floorHookSource is the floor of a command hook: the least program that
// does a hook's job without deciding anything — it reads its input on
// stdin and prints a fixed decision. It is built as a static Go binary,
// as hitl is.
const floorHookSource = `package main

import (
	"io"
	"os"
)

func main() {
	_, _ = io.Copy(io.Discard, os.Stdin)
	_, _ = os.Stdout.WriteString("{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}\n")
}
`

// buildFloorHook builds the floor hook into dir with the Go toolchain and
// returns the binary's path. It fails when there is no toolchain: the
// floor is then not measured.
func buildFloorHook(ctx context.Context, dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("floor hook: no Go toolchain on the PATH to build it with: %w", err)
	}
	src := filepath.Join(dir, "floorhook")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{"go.mod": "module floorhook\n\ngo 1.22\n", "main.go": floorHookSource}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	bin := filepath.Join(dir, "floorhook.bin")
	cmd := exec.CommandContext(ctx, goTool, "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("floor hook: go build: %v: %s", err, out)
	}
	return bin, nil
}

// floorHTTPHook is the floor of the HTTP hook: a loopback net/http server
// that reads the request's body, makes one read of a SQLite store (a
// prepared SELECT of one row by key, in a WAL file in dir with
// synchronous=FULL, through the driver hitl's store uses) and writes a
// fixed response of respLen bytes; on /commit it also inserts the body
// as a row, committed durably, before it answers; on /rows it commits
// hitl's own record of a call a rule allowed instead (hookRecord).
// It returns the server's base URL and a function that stops it.
func floorHTTPHook(dir string, respLen int) (string, func(), error) {
	db, err := openFloorDB(filepath.Join(dir, "floorhook.db"))
	if err != nil {
		return "", nil, fmt.Errorf("floor http hook: %w", err)
	}
	rec, err := openHookRecord(filepath.Join(dir, "floorhook-rows.db"))
	if err != nil {
		db.Close()
		return "", nil, fmt.Errorf("floor http hook: %w", err)
	}
	fail := func(err error) (string, func(), error) {
		db.Close()
		rec.close()
		return "", nil, fmt.Errorf("floor http hook: %w", err)
	}
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS rules (id INTEGER PRIMARY KEY, agent TEXT NOT NULL, body TEXT NOT NULL)`); err != nil {
		return fail(err)
	}
	if _, err := db.Exec(`CREATE INDEX IF NOT EXISTS rules_agent ON rules (agent)`); err != nil {
		return fail(err)
	}
	if _, err := db.Exec(`INSERT INTO rules (agent, body) VALUES ('claude-code', '{"effect":"allow","match":{"arg":"command","prefix":"git status"}}')`); err != nil {
		return fail(err)
	}
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS decisions (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`); err != nil {
		return fail(err)
	}
	read, err := db.Prepare(`SELECT body FROM rules WHERE agent = ?`)
	if err != nil {
		return fail(err)
	}
	record, err := db.Prepare(`INSERT INTO decisions (body) VALUES (?)`)
	if err != nil {
		return fail(err)
	}
	resp := make([]byte, max(respLen, 2))
	for i := range resp {
		resp[i] = ' '
	}
	resp[0], resp[len(resp)-1] = '{', '}'
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var body string
		if err := read.QueryRowContext(r.Context(), "claude-code").Scan(&body); err != nil && !errors.Is(err, sql.ErrNoRows) {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		switch r.URL.Path {
		case "/commit":
			_, err = record.ExecContext(r.Context(), string(in))
		case "/rows":
			err = rec.write(r.Context())
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(resp)))
		_, _ = w.Write(resp)
	})}
	go func() { _ = hs.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() {
		hs.Close()
		read.Close()
		record.Close()
		db.Close()
		rec.close()
	}, nil
}
