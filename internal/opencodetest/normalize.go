package opencodetest

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

var sessionRE = regexp.MustCompile(`ses_[0-9A-Za-z]+`)

// Normalize returns payload, a JSON value from a run, as indented JSON
// with sorted keys and with what differs from run to run replaced: the
// working directory by $CWD, HOME by $HOME, and a session id by ses_0.
// Fixtures are kept in this form.
func (r *Output) Normalize(payload []byte) ([]byte, error) {
	s := string(payload)
	s = strings.ReplaceAll(s, r.Dir, "$CWD")
	s = strings.ReplaceAll(s, r.Home, "$HOME")
	s = sessionRE.ReplaceAllString(s, "ses_0")
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
