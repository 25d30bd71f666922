package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/auth"
)

// runUser manages the people who log in: hitl user add, ls, rm, passwd,
// failures.
func runUser(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runSubcommand(ctx, "user", "Manages the people who log in to the web inbox (and the API) with a\n"+
		"password. They work directly on the database, with the server running or\n"+
		"not. Once a user or token exists, every request needs credentials.",
		[]subcommand{
			{"add", "add a person", runUserAdd},
			{"ls", "list people", runUserList},
			{"rm", "remove a person and end their sessions", runUserRemove},
			{"passwd", "set a person's password and end their sessions", runUserPasswd},
			{"disable", "stop a person signing in, ending their sessions at once", runUserDisable},
			{"enable", "let a disabled person sign in again", runUserEnable},
			{"failures", "show recent failed logins", runUserFailures},
		}, args, os.Stdin, stdout, stderr)
}

// runUserAdd adds a person with a password.
func runUserAdd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("user add", "hitl user add [flags] NAME",
		"Adds a person who logs in with NAME and a password (typed twice, or one line\n"+
			"on stdin with --password-stdin; at least 8 characters). A person answers\n"+
			"what is untargeted or targets their name or one of their groups; an admin\n"+
			"sees and answers everything.", stderr)
	email := fs.String("email", "", "the person's email `address`")
	groups := fs.String("groups", "", "comma-separated `groups`, for targets (such as ops,security)")
	admin := fs.Bool("admin", false, "make the person an admin")
	fromStdin := fs.Bool("password-stdin", false, "read the password from the first line of stdin")
	db := dbFlag(fs)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "hitl user add: give one user name")
		return 2
	}
	u := &hitl.User{Name: fs.Arg(0), Email: strings.TrimSpace(*email), Groups: splitList(*groups), Admin: *admin}
	if err := hitl.ValidateName("user", u.Name); err != nil {
		fmt.Fprintf(stderr, "hitl user add: %s\n", errText(err))
		return 2
	}
	if err := validGroups(u.Groups); err != nil {
		fmt.Fprintf(stderr, "hitl user add: %s\n", errText(err))
		return 2
	}
	ids, err := openIdentities(ctx, *db, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "hitl user add: %v\n", err)
		return 1
	}
	defer ids.Close()
	if _, err := ids.User(ctx, u.Name); err == nil {
		fmt.Fprintf(stderr, "hitl user add: user %q exists already\n", u.Name)
		return 1
	}
	if u.PasswordHash, err = newPasswordHash(stdin, stderr, *fromStdin, u.Name); err != nil {
		fmt.Fprintf(stderr, "hitl user add: %v\n", err)
		return 1
	}
	if err := ids.CreateUser(ctx, u); err != nil {
		fmt.Fprintf(stderr, "hitl user add: %s\n", errText(err))
		return 1
	}
	fmt.Fprintf(stdout, "added %s (%s)\n", u.Name, u.Role())
	return 0
}

// newPasswordHash reads a new password and hashes it.
func newPasswordHash(stdin io.Reader, stderr io.Writer, fromStdin bool, who string) (string, error) {
	pw, err := readPassword(stdin, stderr, fromStdin, who)
	if err != nil {
		return "", err
	}
	return auth.HashPassword(pw)
}

// runUserList lists the people.
func runUserList(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	return identityList[*hitl.User]{
		name: "user ls", usage: "hitl user ls [flags]",
		help:   "Lists the people who log in, by name.",
		noun:   "users",
		header: "NAME\tROLE\tEMAIL\tGROUPS\tCREATED",
		fetch:  func(ctx context.Context, ids identityStore) ([]*hitl.User, error) { return ids.Users(ctx) },
		row: func(u *hitl.User) string {
			role := string(u.Role())
			if u.Disabled {
				role += " (disabled)"
			}
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", u.Name, role, orDash(u.Email), orDash(strings.Join(u.Groups, ",")), when(u.CreatedAt))
		},
	}.run(ctx, args, stdout, stderr)
}

// runUserRemove removes a person.
func runUserRemove(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("user rm", "hitl user rm [flags] NAME", "Removes a person; their sessions end at once.", stderr)
	db := dbFlag(fs)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "hitl user rm: give one user name")
		return 2
	}
	ids, err := openIdentities(ctx, *db, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "hitl user rm: %v\n", err)
		return 1
	}
	defer ids.Close()
	if err := ids.DeleteUser(ctx, fs.Arg(0)); err != nil {
		fmt.Fprintf(stderr, "hitl user rm: %s\n", errText(err))
		return 1
	}
	fmt.Fprintf(stdout, "removed %s\n", fs.Arg(0))
	return 0
}

// runUserPasswd sets a person's password.
func runUserPasswd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("user passwd", "hitl user passwd [flags] NAME",
		"Sets a person's password (typed twice, or one line on stdin with\n--password-stdin); their sessions end, so they log in again.", stderr)
	fromStdin := fs.Bool("password-stdin", false, "read the password from the first line of stdin")
	db := dbFlag(fs)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "hitl user passwd: give one user name")
		return 2
	}
	ids, err := openIdentities(ctx, *db, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "hitl user passwd: %v\n", err)
		return 1
	}
	defer ids.Close()
	name := fs.Arg(0)
	if _, err := ids.User(ctx, name); err != nil {
		fmt.Fprintf(stderr, "hitl user passwd: %s\n", errText(err))
		return 1
	}
	hash, err := newPasswordHash(stdin, stderr, *fromStdin, name)
	if err != nil {
		fmt.Fprintf(stderr, "hitl user passwd: %v\n", err)
		return 1
	}
	if err := ids.SetPassword(ctx, name, hash); err != nil {
		fmt.Fprintf(stderr, "hitl user passwd: %s\n", errText(err))
		return 1
	}
	fmt.Fprintf(stdout, "password of %s changed\n", name)
	return 0
}

// runUserDisable disables a person.
func runUserDisable(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	return setUserDisabled(ctx, "disable", "Stops a person signing in, with a password or through the OpenID\nprovider: their sessions and embed tokens end at once, and no channel\nreaches them. hitl user enable undoes it.", true, args, stdout, stderr)
}

// runUserEnable enables a disabled person.
func runUserEnable(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	return setUserDisabled(ctx, "enable", "Lets a disabled person sign in again.", false, args, stdout, stderr)
}

// setUserDisabled is hitl user disable and enable.
func setUserDisabled(ctx context.Context, verb, help string, disabled bool, args []string, stdout, stderr io.Writer) int {
	name := "user " + verb
	fs := newFlagSet(name, "hitl "+name+" [flags] NAME", help, stderr)
	db := dbFlag(fs)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "hitl %s: give one user name\n", name)
		return 2
	}
	ids, err := openIdentities(ctx, *db, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "hitl %s: %v\n", name, err)
		return 1
	}
	defer ids.Close()
	if err := ids.SetUserDisabled(ctx, fs.Arg(0), disabled); err != nil {
		fmt.Fprintf(stderr, "hitl %s: %s\n", name, errText(err))
		return 1
	}
	fmt.Fprintf(stdout, "%sd %s\n", verb, fs.Arg(0))
	return 0
}

// runUserFailures shows the audit of failed logins.
func runUserFailures(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("user failures", "hitl user failures [flags]", "Shows recent failed logins, newest first: when, the user name tried, from\nwhere and why. Passwords are never recorded.", stderr)
	limit := fs.Int("limit", 50, "show at most `n` failures")
	db := dbFlag(fs)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	ids, err := openIdentities(ctx, *db, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "hitl user failures: %v\n", err)
		return 1
	}
	defer ids.Close()
	fails, err := ids.LoginFailures(ctx, max(*limit, 1))
	if err != nil {
		fmt.Fprintf(stderr, "hitl user failures: %v\n", err)
		return 1
	}
	if len(fails) == 0 {
		fmt.Fprintln(stderr, "no failed logins")
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tUSERNAME\tFROM\tREASON")
	for _, f := range fails {
		fmt.Fprintf(tw, "%s\t%q\t%s\t%s\n", f.At.Local().Format("2006-01-02 15:04:05"), f.Username, f.RemoteAddr, f.Reason)
	}
	tw.Flush()
	return 0
}
