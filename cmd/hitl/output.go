package main

import (
	"encoding/json"
	"io"
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
