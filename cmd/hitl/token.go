package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/auth"
)

// runToken manages API tokens: hitl token create, ls, revoke.
func runToken(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runSubcommand(ctx, "token", "Manages API tokens, for agents (and bots) that call the server with\n"+
		"Authorization: Bearer <token>. They work directly on the database, with the\n"+
		"server running or not. Once a token or user exists, every request needs one.",
		[]subcommand{
			{"create", "make a token and print it once", runTokenCreate},
			{"ls", "list tokens (never their secrets)", runTokenList},
			{"revoke", "delete a token by ID, or every token of a name", runTokenRevoke},
		}, args, os.Stdin, stdout, stderr)
}

// runTokenCreate makes a token and prints it, once, on stdout.
func runTokenCreate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("token create", "hitl token create --name NAME [--role agent|responder|admin] [flags]",
		"Makes an API token and prints it on stdout: it is shown this once, and only\n"+
			"its hash is stored. The name is who the token's calls come from: an agent\n"+
			"sees and cancels what it asked, and never answers; a responder sees and\n"+
			"answers what is untargeted or targets its name or groups; an admin may do\n"+
			"everything. Several tokens may share a name, to rotate one without a gap.", stderr)
	name := fs.String("name", "", "who the token's calls come from, such as build-bot (required)")
	role := fs.String("role", string(hitl.RoleAgent), "`role`: agent, responder or admin")
	groups := fs.String("groups", "", "comma-separated `groups` of a responder token, for targets")
	db := dbFlag(fs)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hitl token create: unexpected arguments: %s (the name goes in --name)\n", strings.Join(fs.Args(), " "))
		return 2
	}
	t := &hitl.Token{Name: *name, Role: hitl.Role(*role), Groups: splitList(*groups)}
	if err := hitl.ValidateName("token", t.Name); err != nil {
		fmt.Fprintf(stderr, "hitl token create: %s\n", errText(err))
		return 2
	}
	if !t.Role.Valid() {
		fmt.Fprintf(stderr, "hitl token create: --role must be agent, responder or admin; got %q\n", *role)
		return 2
	}
	if err := validGroups(t.Groups); err != nil {
		fmt.Fprintf(stderr, "hitl token create: %s\n", errText(err))
		return 2
	}
	ids, err := openIdentities(ctx, *db, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "hitl token create: %v\n", err)
		return 1
	}
	defer ids.Close()

	var secret string
	secret, t.Hash, t.Prefix = auth.NewToken()
	t.ID = auth.NewID()
	if err := ids.CreateToken(ctx, t); err != nil {
		fmt.Fprintf(stderr, "hitl token create: %s\n", errText(err))
		return 1
	}
	fmt.Fprintln(stdout, secret)
	fmt.Fprintf(stderr, "Made token %s for %s (%s). It is shown only now: keep it somewhere safe.\n"+
		"Agents send it as Authorization: Bearer <token>; hitl ask and hitl mcp read HITL_TOKEN.\n", t.ID, t.Name, t.Role)
	return 0
}

// runTokenList lists the tokens.
func runTokenList(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	return identityList[*hitl.Token]{
		name: "token ls", usage: "hitl token ls [flags]",
		help:   "Lists API tokens, oldest first: ID, name, role, groups and the start of\nthe token, never the token itself.",
		noun:   "tokens",
		header: "ID\tNAME\tROLE\tGROUPS\tTOKEN\tCREATED",
		fetch:  func(ctx context.Context, ids identityStore) ([]*hitl.Token, error) { return ids.Tokens(ctx) },
		row: func(t *hitl.Token) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%s…\t%s", t.ID, t.Name, t.Role, orDash(strings.Join(t.Groups, ",")), t.Prefix, when(t.CreatedAt))
		},
	}.run(ctx, args, stdout, stderr)
}

// runTokenRevoke deletes a token by ID, or every token with a name.
func runTokenRevoke(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("token revoke", "hitl token revoke [flags] NAME|ID",
		"Deletes the token with that ID, or else every token with that name. Calls\nwith it are refused from then on, by a running server too.", stderr)
	db := dbFlag(fs)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "hitl token revoke: name the token: its ID or its name")
		return 2
	}
	ids, err := openIdentities(ctx, *db, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "hitl token revoke: %v\n", err)
		return 1
	}
	defer ids.Close()
	gone, err := ids.RevokeTokens(ctx, fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "hitl token revoke: %s\n", errText(err))
		return 1
	}
	for _, t := range gone {
		fmt.Fprintf(stdout, "revoked %s (%s, %s)\n", t.ID, t.Name, t.Role)
	}
	return 0
}

// orDash returns s, or "-" when it is empty, for a table cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
