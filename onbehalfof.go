package hitl

import (
	"strings"
	"unicode/utf8"
)

// A question asked on someone's behalf (on_behalf_of) names a person,
// who is its requester: excluded from answering it unless told otherwise
// (see Consensus.ExcludeRequester). The exclusion compares names, so the
// name must be one a person can have, spelt as theirs is: the engine
// resolves it to a user or a person's token, whatever its case and the
// white space around it, and refuses anything else.

// CleanOnBehalfOf returns on_behalf_of without the white space around
// it, or the EINVALID error when it cannot be a person's name: empty
// once trimmed, too long, or holding anything but ASCII letters, digits
// and . _ @ + - (an invisible character such as a zero-width space, or a
// letter of another script that looks like a Latin one). "" stays "":
// asked on no one's behalf.
func CleanOnBehalfOf(name string) (string, error) {
	if name == "" {
		return "", nil
	}
	trimmed := strings.TrimSpace(name)
	switch {
	case trimmed == "":
		return "", Errorf(EINVALID, "on_behalf_of is blank: name a person, or leave it out")
	case len(trimmed) > MaxNameLen:
		return "", Errorf(EINVALID, "on_behalf_of is limited to %d characters", MaxNameLen)
	case !utf8.ValidString(trimmed) || !validNameRunes(trimmed):
		return "", Errorf(EINVALID, "on_behalf_of %q is not a person's name: names hold only ASCII letters, digits and . _ @ + - (no invisible characters, no look-alike letters of other scripts)", trimmed)
	}
	return trimmed, nil
}
