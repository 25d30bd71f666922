package hitl

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestDuplicateKey: a key repeated in one object is found, at any depth
// and however it is escaped; the same key in two objects is not a repeat.
func TestDuplicateKey(t *testing.T) {
	t.Parallel()
	many := func(n int, repeat string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		b.WriteString(repeat + "}")
		return b.String()
	}
	for _, c := range []struct{ raw, want string }{
		{`{}`, ""},
		{`{"a":1,"b":2}`, ""},
		{`{"a":1,"a":2}`, "a"},
		{`{"a":{"a":1},"b":[{"a":1},{"a":2}]}`, ""},
		{`{"a":{"b":1,"b":2}}`, "b"},
		{`[{"x":1},{"y":1,"y":2}]`, "y"},
		{`{"a":{"b":1},"a":2}`, "a"},
		{`{"a\u0062":1,"ab":2}`, "ab"},
		{`{"\"":1,"\u0022":2}`, `"`},
		{`{"a":"a","b":"a"}`, ""},
		{`{"a":"{\"b\":1,\"b\":2}"}`, ""},
		{`{"x":[1,"a",{"a":[]}],"y":{},"x":0}`, "x"},
		{`"a"`, ""},
		{"{\"\xff\":1,\"\xfe\":2}", "\ufffd"},
		{many(40, ""), ""},
		{many(40, `"k3":0`), "k3"},
		{many(40, `"k39":0`), "k39"},
		{many(16, `"k15":0`), "k15"},
		{many(16, `"k16":0`), ""},
	} {
		if got := duplicateKey([]byte(c.raw)); got != c.want {
			t.Errorf("duplicateKey(%s) = %q; want %q", c.raw, got, c.want)
		}
	}
}

// FuzzDuplicateKey checks duplicateKey against a reading of the same
// value token by token with encoding/json's Decoder.
func FuzzDuplicateKey(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[1,{"c":1,"c":2}]}}`, `{"\u0061":1,"a":2}`, `[{},{"x":null}]`, `{"a":"}\"{","b":1}`, "{\"\xff\":1,\"\xfe\":2}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		if got, want := duplicateKey([]byte(s)), decodedDuplicateKey(json.NewDecoder(strings.NewReader(s))); got != want {
			t.Errorf("duplicateKey(%s) = %q; the decoder finds %q", s, got, want)
		}
	})
}

// decodedDuplicateKey is duplicateKey by encoding/json's tokens: slower,
// and plainly right.
func decodedDuplicateKey(d *json.Decoder) string {
	tok, err := d.Token()
	if err != nil {
		return ""
	}
	switch tok {
	case json.Delim('{'):
		seen := make(map[string]bool)
		for d.More() {
			tok, err := d.Token()
			if err != nil {
				return ""
			}
			k, _ := tok.(string)
			if seen[k] {
				return k
			}
			seen[k] = true
			if k := decodedDuplicateKey(d); k != "" {
				return k
			}
		}
	case json.Delim('['):
		for d.More() {
			if k := decodedDuplicateKey(d); k != "" {
				return k
			}
		}
	default:
		return ""
	}
	_, _ = d.Token() // the closing delimiter
	return ""
}
