package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// printJSONList writes list as an indented JSON array ("[]" when empty),
// without HTML escaping, for the --json output of the listing commands.
func printJSONList[T any](w io.Writer, list []T) error {
	if list == nil {
		list = []T{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(list)
}

// identityList is an "ls" subcommand over the identity store: tokens or
// users, as a table or as JSON.
type identityList[T any] struct {
	name   string // "token ls"
	usage  string
	help   string
	noun   string // "tokens"
	header string // the table's header, tab-separated
	fetch  func(context.Context, identityStore) ([]T, error)
	row    func(T) string // one table row, tab-separated
}

// run runs the subcommand with args.
func (l identityList[T]) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(l.name, l.usage, l.help, stderr)
	asJSON := fs.Bool("json", false, "print the "+l.noun+" as a JSON array")
	db := dbFlag(fs)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "hitl %s: %v\n", l.name, err)
		return 1
	}
	ids, err := openIdentities(ctx, *db, stderr)
	if err != nil {
		return fail(err)
	}
	defer ids.Close()
	list, err := l.fetch(ctx, ids)
	if err != nil {
		return fail(err)
	}
	if *asJSON {
		if err := printJSONList(stdout, list); err != nil {
			return fail(err)
		}
		return 0
	}
	if len(list) == 0 {
		fmt.Fprintln(stderr, "no "+l.noun)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, l.header)
	for _, item := range list {
		fmt.Fprintln(tw, l.row(item))
	}
	if err := tw.Flush(); err != nil {
		return fail(err)
	}
	return 0
}
