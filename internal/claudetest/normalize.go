package claudetest

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// Normalize returns payload, a JSON value from a run, as indented JSON with
// sorted keys and with what differs from run to run replaced: the scratch
// directory by $CWD, HOME by $HOME, the scratch directory as Claude Code
// names its project folder by $PROJECT, and every UUID by
// 00000000-0000-0000-0000-000000000000. Fixtures are kept in this form.
func (r *Output) Normalize(payload []byte) ([]byte, error) {
	s := string(payload)
	s = strings.ReplaceAll(s, r.Dir, "$CWD")
	s = strings.ReplaceAll(s, r.Home, "$HOME")
	s = strings.ReplaceAll(s, projectName(r.Dir), "$PROJECT")
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

// projectName is the folder name Claude Code gives a working directory
// under ~/.claude/projects: every character but letters and digits as "-".
func projectName(dir string) string {
	return regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(dir, "-")
}
