package hitl_test

import (
	"encoding/json"
	"testing"

	"github.com/hitl-sh/hitl"
)

func TestCanonicalJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{ "b": 1, "a": [true, null, "x"] }`, `{"a":[true,null,"x"],"b":1}`},
		{`{"n": 1.0, "e": 1e3, "f": 0.000001, "g": 1e21, "h": -0.0, "i": 1E-7}`, `{"e":1000,"f":0.000001,"g":1e+21,"h":0,"i":1e-7,"n":1}`},
		// Strings: only the escapes JSON needs; no HTML escaping; U+2028 as it is.
		{`{"s": "<a href=\"x\">\u2028\u0001\b\f\n\r\t\\\/é"}`, "{\"s\":\"<a href=\\\"x\\\">\u2028\\u0001\\b\\f\\n\\r\\t\\\\/é\"}"},
		// Keys sorted by UTF-16 code units: U+1F600 (a surrogate pair, D83D…) before U+FB01.
		{`{"\ufb01": 1, "\ud83d\ude00": 2, "a": 3}`, "{\"a\":3,\"\U0001F600\":2,\"\uFB01\":1}"},
	}
	for _, tt := range tests {
		got, err := hitl.CanonicalJSON(json.RawMessage(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("CanonicalJSON(%s):\n got %s, %v\nwant %s", tt.in, got, err, tt.want)
		}
	}
	if _, err := hitl.CanonicalJSON(json.RawMessage(`{"a":`)); err == nil {
		t.Error("CanonicalJSON of invalid JSON: no error")
	}
}
