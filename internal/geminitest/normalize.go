package geminitest

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// sessionFileRE matches the dated part of a transcript's file name:
	// session-2026-12-04T16-50-b4f9d2c1.jsonl.
	sessionFileRE = regexp.MustCompile(`session-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-[0-9a-f]{8}`)
	timestampRE   = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z`)
)

// Normalize returns payload, a JSON value from a run, as indented JSON with
// sorted keys and with what differs from run to run replaced: the working
// directory by $CWD, HOME by $HOME, a transcript's dated name by
// session-DATE-00000000, a timestamp by 2000-01-01T00:00:00.000Z, and
// every UUID by 00000000-0000-0000-0000-000000000000. Fixtures are kept in
// this form.
func (r *Output) Normalize(payload []byte) ([]byte, error) {
	s := string(payload)
	s = strings.ReplaceAll(s, r.Dir, "$CWD")
	s = strings.ReplaceAll(s, r.Home, "$HOME")
	s = sessionFileRE.ReplaceAllString(s, "session-DATE-00000000")
	s = timestampRE.ReplaceAllString(s, "2000-01-01T00:00:00.000Z")
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
