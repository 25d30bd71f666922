package codextest

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// rolloutRE matches the dated part of a transcript's path:
	// sessions/2026/12/04/rollout-2026-12-04T16-48-22-<uuid>.jsonl.
	rolloutRE = regexp.MustCompile(`sessions/\d{4}/\d{2}/\d{2}/rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-`)
)

// Normalize returns payload, a JSON value from a run, as indented JSON with
// sorted keys and with what differs from run to run replaced: the working
// directory by $CWD, HOME by $HOME, the date in a transcript's path by
// YYYY/MM/DD and DATE, and every UUID by
// 00000000-0000-0000-0000-000000000000. Fixtures are kept in this form.
func (r *Output) Normalize(payload []byte) ([]byte, error) {
	s := string(payload)
	s = strings.ReplaceAll(s, r.Dir, "$CWD")
	s = strings.ReplaceAll(s, r.Home, "$HOME")
	s = rolloutRE.ReplaceAllString(s, "sessions/YYYY/MM/DD/rollout-DATE-")
	s = uuidRE.ReplaceAllString(s, "00000000-0000-0000-0000-000000000000")
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
