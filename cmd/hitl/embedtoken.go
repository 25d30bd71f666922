package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/auth"
)

// runEmbedToken runs hitl embed-token: the short-lived tokens of the
// <hitl-prompt> element, as POST /api/v1/embed-tokens mints them.
func runEmbedToken(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runSubcommand(ctx, "embed-token", "Manages embed tokens: the short-lived credentials of one person for the\n"+
		"<hitl-prompt> element on another site's chat page (docs/embed.md). A site's\n"+
		"backend usually mints them over the API (POST /api/v1/embed-tokens); these\n"+
		"commands work directly on the database, with the server running or not.",
		[]subcommand{
			{"create", "mint a token for a user and sessions, and print it once", runEmbedTokenCreate},
			{"ls", "list the tokens in force (never their secrets)", runEmbedTokenList},
			{"revoke", "revoke a token by ID", runEmbedTokenRevoke},
		}, args, os.Stdin, stdout, stderr)
}

// runEmbedTokenCreate mints an embed token and prints it, once, on stdout.
func runEmbedTokenCreate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("embed-token create", "hitl embed-token create --user NAME --session ID [--session ID …] [--ttl 1h] [flags]",
		"Mints an embed token for a user and the sessions (conversations) of their\n"+
			"chat page, and prints it on stdout: it is shown this once, and only its hash\n"+
			"is stored. With it, <hitl-prompt> reads and answers only the questions of\n"+
			"those sessions that the user may answer.", stderr)
	user := fs.String("user", "", "the `user` the token acts for (required)")
	var sessions []string
	fs.Func("session", "a session `ID` the token covers; repeatable (at least one)", func(s string) error {
		sessions = append(sessions, s)
		return nil
	})
	ttl := fs.Duration("ttl", hitl.DefaultEmbedTTL, "how long the token lasts, at most 24h")
	db := dbFlag(fs)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "hitl embed-token create: %s\n", errText(err))
		return code
	}
	if err := hitl.ValidateName("user", *user); err != nil {
		return fail(2, err)
	}
	if err := hitl.ValidateEmbedSessions(sessions); err != nil {
		return fail(2, err)
	}
	if *ttl < time.Second || *ttl > hitl.MaxEmbedTTL {
		return fail(2, fmt.Errorf("--ttl must be between 1s and %s; got %s", hitl.MaxEmbedTTL, *ttl))
	}
	ids, err := openIdentities(ctx, *db, stderr)
	if err != nil {
		return fail(1, err)
	}
	defer ids.Close()
	secret, hash, prefix := auth.NewEmbedToken()
	now := time.Now().UTC().Truncate(time.Millisecond)
	t := &hitl.EmbedToken{ID: auth.NewID(), User: *user, SessionIDs: sessions, Prefix: prefix, Hash: hash,
		CreatedBy: "hitl embed-token", CreatedAt: now, ExpiresAt: now.Add(*ttl)}
	if err := ids.CreateEmbedToken(ctx, t); err != nil {
		return fail(1, err)
	}
	fmt.Fprintln(stdout, secret)
	fmt.Fprintf(stderr, "Made embed token %s for %s (sessions %s), until %s. It is shown only now:\n"+
		"give it to <hitl-prompt token=…> on that person's page, and to no one else.\n", t.ID, t.User, strings.Join(sessions, ", "), when(t.ExpiresAt))
	return 0
}

// runEmbedTokenList lists the embed tokens in force.
func runEmbedTokenList(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	return identityList[*hitl.EmbedToken]{
		name: "embed-token ls", usage: "hitl embed-token ls [flags]",
		help:   "Lists the embed tokens that have not expired, oldest first: ID, user,\nsessions, the start of the token (never the token itself) and when it expires.",
		noun:   "embed tokens",
		header: "ID\tUSER\tSESSIONS\tTOKEN\tEXPIRES",
		fetch: func(ctx context.Context, ids identityStore) ([]*hitl.EmbedToken, error) {
			return ids.EmbedTokensOf(ctx, "", time.Now())
		},
		row: func(t *hitl.EmbedToken) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s…\t%s", t.ID, t.User, strings.Join(t.SessionIDs, ","), t.Prefix, when(t.ExpiresAt))
		},
	}.run(ctx, args, stdout, stderr)
}

// runEmbedTokenRevoke deletes an embed token by ID.
func runEmbedTokenRevoke(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("embed-token revoke", "hitl embed-token revoke [flags] ID",
		"Revokes the embed token with that ID: the prompts using it stop, by a running\nserver too, at its next credential check.", stderr)
	db := dbFlag(fs)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "hitl embed-token revoke: name the token by its ID")
		return 2
	}
	ids, err := openIdentities(ctx, *db, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "hitl embed-token revoke: %v\n", err)
		return 1
	}
	defer ids.Close()
	if err := ids.RevokeEmbedToken(ctx, fs.Arg(0)); err != nil {
		fmt.Fprintf(stderr, "hitl embed-token revoke: %s\n", errText(err))
		return 1
	}
	fmt.Fprintf(stdout, "Revoked embed token %s.\n", fs.Arg(0))
	return 0
}
