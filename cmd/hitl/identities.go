package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
)

// What hitl token and hitl user share: the database they open directly,
// the same one hitl serve uses, so the first admin can be made before the
// server ever runs, or while it runs.

// dbFlag adds the --db flag, resolved as hitl serve resolves it.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", envOr("HITL_DB", defaultDB), "SQLite database `file`, or a postgres:// URL: the one hitl serve uses (HITL_DB)")
}

// identityStore is a store that keeps users and tokens.
type identityStore interface {
	hitl.Store
	hitl.Identities
}

// openIdentities opens the database db for managing users and tokens.
// Only warnings are logged, to stderr.
func openIdentities(ctx context.Context, db string, stderr io.Writer) (identityStore, error) {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, err := openStore(ctx, log, db, false)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", redactDB(db), err)
	}
	ids, ok := store.(identityStore)
	if !ok {
		store.Close()
		return nil, fmt.Errorf("the database %s cannot hold users and tokens", redactDB(db))
	}
	return ids, nil
}

// subcommand is one subcommand of hitl token or hitl user.
type subcommand struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// runSubcommand runs the subcommand named by args[0] of the command
// group, or prints the group's usage.
func runSubcommand(ctx context.Context, group, summary string, subs []subcommand, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: hitl %s <command> [flags] [arguments]\n\n%s\n\nCommands:\n", group, summary)
		for _, s := range subs {
			fmt.Fprintf(w, "  %-8s %s\n", s.name, s.summary)
		}
		fmt.Fprintf(w, "\nRun \"hitl %s <command> -h\" for a command's flags.\n", group)
	}
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	}
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(ctx, args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "hitl %s: unknown command %q\n\n", group, args[0])
	usage(stderr)
	return 2
}

// splitList splits a comma-separated list, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// validGroups checks every group name.
func validGroups(groups []string) error {
	for _, g := range groups {
		if err := hitl.ValidateName("group", g); err != nil {
			return err
		}
	}
	return nil
}

// readLine reads one line, without its line ending. A last line without
// one is a line; no input at all is an error.
func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		if errors.Is(err, io.EOF) {
			return "", errors.New("no password given")
		}
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// errNotTerminal says how to give a password without a terminal.
var errNotTerminal = errors.New("stdin is not a terminal: pipe the password in with --password-stdin")

// readPassword reads a new password: one line from stdin with
// --password-stdin, else typed twice at the terminal without echo.
func readPassword(stdin io.Reader, stderr io.Writer, fromStdin bool, who string) (string, error) {
	if fromStdin {
		return readLine(bufio.NewReader(stdin))
	}
	f, ok := stdin.(*os.File)
	if !ok || !isTerminal(f) {
		return "", errNotTerminal
	}
	pw, err := readSecret(f, stderr, "Password for "+who+": ")
	if err != nil {
		return "", err
	}
	again, err := readSecret(f, stderr, "Again: ")
	if err != nil {
		return "", err
	}
	if pw != again {
		return "", errors.New("the passwords differ")
	}
	return pw, nil
}

// when formats a creation time for a table, in local time.
func when(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04")
}
