package hitl

import (
	"bytes"
	"encoding/json"
	"strings"
)

// MaxFreeTextLen bounds a free-text answer, in bytes.
const MaxFreeTextLen = 64 << 10

var (
	approveWords = map[string]bool{"true": true, "yes": true, "y": true, "approve": true, "approved": true, "accept": true, "ok": true, "confirm": true}
	rejectWords  = map[string]bool{"false": true, "no": true, "n": true, "reject": true, "rejected": true, "deny": true, "denied": true, "decline": true}
)

// NormalizeAnswer validates raw as an answer to in and returns the canonical
// typed value: true/false for approval, an option key for single_choice, an
// array of unique keys for multi_choice, an object valid against the schema
// for form, a string for free_text, a non-empty string for handoff (the
// person's reply), a decision object for action (see
// NormalizeActionAnswer; one that asks for a rule with "always" is refused
// here, as only the engine's Respond makes rules). Lenient inputs are
// mapped to it (a label instead of a key, "yes"/"no" for approval, a JSON
// string holding a form).
// Errors have code EVALUE and say why.
func NormalizeAnswer(in *Interaction, raw json.RawMessage) (json.RawMessage, error) {
	raw = trimJSONSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, Errorf(EVALUE, "value is required")
	}
	// json.Valid rejects trailing data, which Decoder.More lets through
	// when it is a stray "]" or "}".
	if !json.Valid(raw) {
		return nil, Errorf(EVALUE, "value is not valid JSON")
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, Errorf(EVALUE, "value is not valid JSON")
	}
	switch in.Type {
	case TypeAction:
		a, err := NormalizeActionAnswer(in, raw)
		if err != nil {
			return nil, err
		}
		if a.Always != nil {
			return nil, Errorf(EVALUE, "always makes a rule; only a person's answer may carry it")
		}
		return a.Value, nil
	case TypeApproval:
		return normalizeApproval(in, v)
	case TypeSingleChoice:
		if a, ok := v.([]any); ok && len(a) == 1 {
			v = a[0]
		}
		s, ok := v.(string)
		if !ok {
			return nil, Errorf(EVALUE, "single_choice value must be an option key (a string)")
		}
		key, ok := in.matchOption(s)
		if !ok {
			return nil, Errorf(EVALUE, "%q is not an option; choose one of %s", s, in.optionKeys())
		}
		return json.Marshal(key)
	case TypeMultiChoice:
		return normalizeMulti(in, v)
	case TypeHandoff:
		return normalizeHandoff(v)
	case TypeForm:
		if s, ok := v.(string); ok { // a form sent as a JSON string
			raw = json.RawMessage(s)
		}
		return validateForm(in.FormSchema, raw)
	default:
		var s string
		switch t := v.(type) {
		case string:
			s = t
		case json.Number:
			s = t.String()
		case bool:
			s = string(raw)
		default:
			return nil, Errorf(EVALUE, "free_text value must be a string")
		}
		if len(s) > MaxFreeTextLen {
			return nil, Errorf(EVALUE, "free_text value is limited to %d bytes", MaxFreeTextLen)
		}
		return json.Marshal(s)
	}
}

// trimJSONSpace trims the white space JSON allows around a value and no
// other (bytes.TrimSpace would also take "\v" or U+00A0, which make the
// input invalid JSON).
func trimJSONSpace(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

func normalizeApproval(in *Interaction, v any) (json.RawMessage, error) {
	switch t := v.(type) {
	case bool:
		return json.Marshal(t)
	case string:
		s := strings.ToLower(strings.TrimSpace(t))
		if len(in.Options) == 2 {
			if key, ok := in.matchOption(t); ok {
				return json.Marshal(key == in.Options[0].Key)
			}
		}
		if approveWords[s] {
			return json.RawMessage("true"), nil
		}
		if rejectWords[s] {
			return json.RawMessage("false"), nil
		}
	}
	return nil, Errorf(EVALUE, "approval value must be true or false (or %s)", in.optionKeys())
}

func normalizeMulti(in *Interaction, v any) (json.RawMessage, error) {
	var items []string
	switch t := v.(type) {
	case string: // one key or label, or a comma-separated list of them
		if key, ok := in.matchOption(t); ok {
			items = []string{key}
		} else if strings.TrimSpace(t) != "" {
			items = strings.Split(t, ",")
		}
	case []any:
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, Errorf(EVALUE, "multi_choice value must be an array of option keys")
			}
			items = append(items, s)
		}
	default:
		return nil, Errorf(EVALUE, "multi_choice value must be an array of option keys")
	}
	keys := make([]string, 0, len(items))
	seen := make(map[string]bool, len(items))
	for _, s := range items {
		key, ok := in.matchOption(s)
		if !ok {
			return nil, Errorf(EVALUE, "%q is not an option; choose from %s", strings.TrimSpace(s), in.optionKeys())
		}
		if seen[key] {
			return nil, Errorf(EVALUE, "option %q is chosen twice", key)
		}
		seen[key] = true
		keys = append(keys, key)
	}
	return json.Marshal(keys)
}

// matchOption maps s to an option key: the exact key, else the option whose
// label is s, else a key or label equal to s ignoring case, in that order,
// all ignoring surrounding space. An exact label beats a key that only
// matches ignoring case, so a client that sends labels gets what was shown.
func (in *Interaction) matchOption(s string) (string, bool) {
	if _, ok := in.Option(s); ok {
		return s, true
	}
	t := strings.TrimSpace(s)
	for _, o := range in.Options {
		if o.Key == t {
			return o.Key, true
		}
	}
	for _, o := range in.Options {
		if strings.TrimSpace(o.Label) == t {
			return o.Key, true
		}
	}
	for _, o := range in.Options {
		if strings.EqualFold(o.Key, t) {
			return o.Key, true
		}
	}
	for _, o := range in.Options {
		if strings.EqualFold(strings.TrimSpace(o.Label), t) {
			return o.Key, true
		}
	}
	return "", false
}

func (in *Interaction) optionKeys() string {
	keys := make([]string, len(in.Options))
	for i, o := range in.Options {
		keys[i] = o.Key
	}
	b, _ := json.Marshal(keys)
	return string(b)
}
