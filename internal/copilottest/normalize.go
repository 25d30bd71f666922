package copilottest

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// Normalize returns payload, a JSON object from a run, as indented JSON
// with sorted keys and with what differs from run to run replaced: the
// working directory by $CWD, HOME by $HOME, every UUID by
// 00000000-0000-0000-0000-000000000000, and a top-level "timestamp"
// (milliseconds since 1970) by 0. Fixtures are kept in this form.
func (r *Output) Normalize(payload []byte) ([]byte, error) {
	s := string(payload)
	s = strings.ReplaceAll(s, r.Dir, "$CWD")
	s = strings.ReplaceAll(s, r.Home, "$HOME")
	s = uuidRE.ReplaceAllString(s, "00000000-0000-0000-0000-000000000000")
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, err
	}
	if _, ok := v["timestamp"].(float64); ok {
		v["timestamp"] = 0
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
