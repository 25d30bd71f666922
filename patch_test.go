package hitl_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
)

func TestJSONPatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		from, to string
		want     string // "" for no difference
	}{
		{"equal", `{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, ""},
		{"equal numbers", `{"a":1,"b":1.50,"c":-0}`, `{"a":1.0,"b":15e-1,"c":0}`, ""},
		{"empty", `{}`, `{}`, ""},
		{"replace", `{"a":1}`, `{"a":2}`, `[{"op":"replace","path":"/a","value":2}]`},
		{"add", `{}`, `{"a":"x"}`, `[{"op":"add","path":"/a","value":"x"}]`},
		{"remove", `{"a":null}`, `{}`, `[{"op":"remove","path":"/a"}]`},
		{"null to value", `{"a":null}`, `{"a":false}`, `[{"op":"replace","path":"/a","value":false}]`},
		{"value to null", `{"a":1}`, `{"a":null}`, `[{"op":"replace","path":"/a","value":null}]`},
		{"sorted keys", `{"c":1,"a":1}`, `{"b":1,"c":2}`, `[{"op":"remove","path":"/a"},{"op":"add","path":"/b","value":1},{"op":"replace","path":"/c","value":2}]`},
		{"nested", `{"o":{"x":1,"y":{"z":1}}}`, `{"o":{"x":1,"y":{"z":2}}}`, `[{"op":"replace","path":"/o/y/z","value":2}]`},
		{"array whole", `{"a":[1,2,3]}`, `{"a":[1,3]}`, `[{"op":"replace","path":"/a","value":[1,3]}]`},
		{"object to array", `{"a":{"b":1}}`, `{"a":[1]}`, `[{"op":"replace","path":"/a","value":[1]}]`},
		{"string to number", `{"a":"1"}`, `{"a":1}`, `[{"op":"replace","path":"/a","value":1}]`},
		{"escaped keys", `{"a/b":1,"m~n":1}`, `{"a/b":2,"m~n":2}`, `[{"op":"replace","path":"/a~1b","value":2},{"op":"replace","path":"/m~0n","value":2}]`},
		{"html kept", `{"a":""}`, `{"a":"<b>&</b>"}`, `[{"op":"replace","path":"/a","value":"<b>&</b>"}]`},
		{"big numbers exact", `{"a":12345678901234567890}`, `{"a":12345678901234567891}`, `[{"op":"replace","path":"/a","value":12345678901234567891}]`},
		{"root not an object", `[1]`, `[2]`, `[{"op":"replace","path":"","value":[2]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := hitl.JSONPatch(json.RawMessage(tt.from), json.RawMessage(tt.to))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("JSONPatch(%s, %s):\n got %s\nwant %s", tt.from, tt.to, got, tt.want)
			}
			if tt.want == "" {
				return
			}
			// Applied to from, the patch gives to.
			if applied := applyPatch(t, tt.from, got); !hitl.JSONEqual(applied, json.RawMessage(tt.to)) {
				t.Errorf("applying the patch to %s gives %s, want %s", tt.from, applied, tt.to)
			}
		})
	}
	if _, err := hitl.JSONPatch(json.RawMessage(`{`), json.RawMessage(`{}`)); err == nil {
		t.Error("JSONPatch of invalid JSON: no error")
	}
}

// applyPatch applies an RFC 6902 patch of add, remove and replace
// operations to the JSON document doc: a small independent reading of the
// RFC, to check JSONPatch against.
func applyPatch(t *testing.T, doc string, patch json.RawMessage) json.RawMessage {
	t.Helper()
	root := decodeNumbers(t, []byte(doc))
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(patch, &ops); err != nil {
		t.Fatalf("patch %s: %v", patch, err)
	}
	for _, op := range ops {
		var v any
		if op.Value != nil {
			v = decodeNumbers(t, op.Value)
		}
		if op.Path == "" {
			root = v
			continue
		}
		tokens := strings.Split(op.Path[1:], "/")
		parent := root
		for _, tok := range tokens[:len(tokens)-1] {
			parent = parent.(map[string]any)[unescape(tok)]
		}
		m := parent.(map[string]any)
		key := unescape(tokens[len(tokens)-1])
		_, exists := m[key]
		switch op.Op {
		case "add":
			m[key] = v
		case "replace":
			if !exists {
				t.Fatalf("replace of missing %s", op.Path)
			}
			m[key] = v
		case "remove":
			if !exists {
				t.Fatalf("remove of missing %s", op.Path)
			}
			delete(m, key)
		default:
			t.Fatalf("unexpected op %q", op.Op)
		}
	}
	b, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeNumbers decodes b keeping numbers exact.
func decodeNumbers(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func unescape(tok string) string {
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
}

func TestJSONEqual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want bool
	}{
		{`1`, `1.0`, true},
		{`100`, `1e2`, true},
		{`1E+2`, `100.000`, true},
		{`0.001`, `1e-3`, true},
		{`-0`, `0.0`, true},
		{`-1`, `1`, false},
		{`1e999999999`, `1e999999999`, true}, // fast: never expanded
		{`1e999999999`, `1e999999998`, false},
		{`10e999999998`, `1e999999999`, true},
		{`12345678901234567890`, `12345678901234567891`, false},
		{`"a"`, `"a"`, true},
		{`"1"`, `1`, false},
		{`null`, `null`, true},
		{`null`, `false`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":[1,{"b":null}]}`, `{ "a" : [ 1.0 , {"b":null} ] }`, true},
		{`{"a":1}`, `{"a":1,"b":1}`, false},
		{`{"a":1}`, `{"b":1}`, false},
		{`{`, `{`, false},
	}
	for _, tt := range tests {
		if got := hitl.JSONEqual(json.RawMessage(tt.a), json.RawMessage(tt.b)); got != tt.want {
			t.Errorf("JSONEqual(%s, %s): got %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	// A long number compares in linear time too.
	long := "1" + strings.Repeat("0", 100000)
	if !hitl.JSONEqual(json.RawMessage(long), json.RawMessage("1e"+strconv.Itoa(100000))) {
		t.Error("10^100000 written out differs from 1e100000")
	}
}
