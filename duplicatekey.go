package hitl

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// duplicateKey returns the first object key that appears twice in one
// object of the JSON value raw, or "". Keys are compared as decoded, so
// "a" and "\u0061" are the same key, and so are two keys whose invalid
// UTF-8 decodes to the same replacement characters. raw must be valid JSON (callers
// check it first); on anything else it returns what it found so far or
// "".
//
// It scans the bytes once, without decoding: this check runs on every
// action an agent proposes, most of them decided by a rule.
func duplicateKey(raw []byte) string {
	var (
		keys     [][]byte     // the keys of the open objects, outermost first
		open     []openObject // the open containers, innermost last
		expected = false      // the next string is a key
	)
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{':
			open = append(open, openObject{object: true, start: len(keys)})
			expected = true
		case '[':
			open = append(open, openObject{})
			expected = false
		case '}', ']':
			if len(open) == 0 {
				return ""
			}
			top := open[len(open)-1]
			if top.object {
				keys = keys[:top.start]
			}
			open = open[:len(open)-1]
			expected = false
		case ',':
			expected = len(open) > 0 && open[len(open)-1].object
		case ':':
			expected = false
		case '"':
			end := stringEnd(raw, i+1)
			if end < 0 {
				return ""
			}
			if expected && len(open) > 0 {
				key := raw[i+1 : end]
				if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
					var s string
					if json.Unmarshal(raw[i:end+1], &s) != nil {
						return ""
					}
					key = []byte(s)
				}
				top := &open[len(open)-1]
				if top.seen(keys[top.start:], key) {
					return string(key)
				}
				keys = append(keys, key)
				top.add(key)
			}
			i = end
		}
	}
	return ""
}

// openObject is a container duplicateKey is inside: an object, whose keys
// are keys[start:] of the scan, or an array.
type openObject struct {
	object bool
	start  int
	// index holds the keys of an object with more than linearKeys of
	// them, made when it grows past that.
	index map[string]struct{}
}

// linearKeys is how many keys an object's duplicates are looked for
// among one by one; past it, through a map.
const linearKeys = 16

// seen reports whether key is among keys, the object's keys so far.
func (o *openObject) seen(keys [][]byte, key []byte) bool {
	if o.index != nil {
		_, ok := o.index[string(key)]
		return ok
	}
	for _, k := range keys {
		if bytes.Equal(k, key) {
			return true
		}
	}
	if len(keys) == linearKeys {
		o.index = make(map[string]struct{}, 2*linearKeys)
		for _, k := range keys {
			o.index[string(k)] = struct{}{}
		}
	}
	return false
}

// add records key, once seen has said it is new.
func (o *openObject) add(key []byte) {
	if o.index != nil {
		o.index[string(key)] = struct{}{}
	}
}

// stringEnd returns the index of the quote that ends the JSON string
// whose text starts at raw[i], or -1.
func stringEnd(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case '"':
			return i
		case '\\':
			i += 2
		default:
			i++
		}
	}
	return -1
}
