package hitl_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hitl-sh/hitl"
)

// Interactions of every type, shared by the answer tests. They are only read.
var (
	approvalIn = mustCreate(hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Deploy?"})
	// Custom approval options, approve first, as the AI-Parrot HITL contract sends them.
	customApprovalIn = mustCreate(hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Deploy?",
		Options: hitl.OptionList{{Key: "ship", Label: "Ship it"}, {Key: "hold", Label: "Hold"}}})
	colours = hitl.OptionList{
		{Key: "red", Label: "Red"},
		{Key: "green", Label: "Green"},
		{Key: "blue", Label: "Dark Blue"},
		{Key: "bw", Label: "Black, white"}, // a label with a comma
	}
	singleIn = mustCreate(hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "Colour?", Options: colours})
	multiIn  = mustCreate(hitl.CreateRequest{Type: hitl.TypeMultiChoice, Question: "Colours?", Options: colours})
	// Options whose labels collide with other options' keys.
	trickyIn = mustCreate(hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "Which?",
		Options: hitl.OptionList{{Key: "a", Label: "B"}, {Key: "b", Label: "a"}, {Key: "C", Label: "third"}, {Key: "c", Label: "fourth"}}})
	formIn = mustCreate(hitl.CreateRequest{Type: hitl.TypeForm, Question: "Who?", FormSchema: json.RawMessage(`{
		"type": "object",
		"required": ["name"],
		"properties": {
			"name": {"type": "string", "minLength": 1},
			"age": {"type": "integer", "minimum": 0},
			"tags": {"type": "array", "items": {"type": "string"}}
		}
	}`)})
	freeIn = mustCreate(hitl.CreateRequest{Question: "Anything else?"})
)

func mustCreate(req hitl.CreateRequest) *hitl.Interaction {
	in, err := hitl.NewInteraction(req, agent, now)
	if err != nil {
		panic(err)
	}
	return in
}

func TestNormalizeAnswer(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", hitl.MaxFreeTextLen)
	tests := []struct {
		name string
		in   *hitl.Interaction
		raw  string
		want string // canonical value; "" when an error is wanted
		err  string // substring of the error message
	}{
		// approval
		{"approval true", approvalIn, `true`, `true`, ""},
		{"approval false", approvalIn, `false`, `false`, ""},
		{"approval padded", approvalIn, " \n true \t", `true`, ""},
		{"approval yes", approvalIn, `"yes"`, `true`, ""},
		{"approval YES spaced", approvalIn, `" YES "`, `true`, ""},
		{"approval no", approvalIn, `"no"`, `false`, ""},
		{"approval approve key", approvalIn, `"approve"`, `true`, ""},
		{"approval reject key", approvalIn, `"reject"`, `false`, ""},
		{"approval Approve label", approvalIn, `"Approve"`, `true`, ""},
		{"approval string true", approvalIn, `"true"`, `true`, ""},
		{"approval string false", approvalIn, `"false"`, `false`, ""},
		{"approval denied", approvalIn, `"denied"`, `false`, ""},
		{"approval custom first key", customApprovalIn, `"ship"`, `true`, ""},
		{"approval custom second key", customApprovalIn, `"hold"`, `false`, ""},
		{"approval custom first label", customApprovalIn, `"ship it"`, `true`, ""},
		{"approval custom second label", customApprovalIn, `"Hold"`, `false`, ""},
		{"approval custom still takes yes", customApprovalIn, `"yes"`, `true`, ""},
		{"approval maybe", approvalIn, `"maybe"`, "", `approval value must be true or false (or ["approve","reject"])`},
		{"approval number", approvalIn, `1`, "", "approval value must be true or false"},
		{"approval array", approvalIn, `[true]`, "", "approval value must be true or false"},
		{"approval object", approvalIn, `{"value":true}`, "", "approval value must be true or false"},
		{"approval empty string", approvalIn, `""`, "", "approval value must be true or false"},
		{"approval custom unknown", customApprovalIn, `"approve it"`, "", `["ship","hold"]`},

		// single_choice
		{"single key", singleIn, `"green"`, `"green"`, ""},
		{"single label", singleIn, `"Dark Blue"`, `"blue"`, ""},
		{"single label any case", singleIn, `"dark blue"`, `"blue"`, ""},
		{"single key any case, spaced", singleIn, `" RED "`, `"red"`, ""},
		{"single label with comma", singleIn, `"Black, white"`, `"bw"`, ""},
		{"single one-element array", singleIn, `["Green"]`, `"green"`, ""},
		{"single unknown", singleIn, `"purple"`, "", `"purple" is not an option; choose one of ["red","green","blue","bw"]`},
		{"single empty", singleIn, `""`, "", `"" is not an option`},
		{"single two-element array", singleIn, `["red","green"]`, "", "must be an option key (a string)"},
		{"single empty array", singleIn, `[]`, "", "must be an option key (a string)"},
		{"single number", singleIn, `1`, "", "must be an option key (a string)"},
		{"single bool", singleIn, `true`, "", "must be an option key (a string)"},
		{"single object", singleIn, `{"key":"red"}`, "", "must be an option key (a string)"},
		{"exact key beats label", trickyIn, `"a"`, `"a"`, ""},
		{"exact label beats key ignoring case", trickyIn, `"B"`, `"a"`, ""},
		{"key ignoring case", trickyIn, `" A "`, `"a"`, ""},
		{"case-distinct keys exact", trickyIn, `"C"`, `"C"`, ""},
		{"case-distinct keys exact lower", trickyIn, `"c"`, `"c"`, ""},

		// multi_choice
		{"multi keys", multiIn, `["red","blue"]`, `["red","blue"]`, ""},
		{"multi order kept", multiIn, `["blue","red"]`, `["blue","red"]`, ""},
		{"multi labels", multiIn, `["Dark Blue","green"]`, `["blue","green"]`, ""},
		{"multi none", multiIn, `[]`, `[]`, ""},
		{"multi single key", multiIn, `"red"`, `["red"]`, ""},
		{"multi single label", multiIn, `"Dark Blue"`, `["blue"]`, ""},
		{"multi label containing a comma", multiIn, `"Black, white"`, `["bw"]`, ""},
		{"multi comma list", multiIn, `"red, Dark Blue,green"`, `["red","blue","green"]`, ""},
		{"multi empty string", multiIn, `""`, `[]`, ""},
		{"multi unknown key", multiIn, `["red","purple"]`, "", `"purple" is not an option; choose from ["red","green","blue","bw"]`},
		{"multi unknown in comma list", multiIn, `"red, purple"`, "", `"purple" is not an option`},
		{"multi trailing comma", multiIn, `"red,"`, "", `"" is not an option`},
		{"multi duplicate keys", multiIn, `["red","red"]`, "", `option "red" is chosen twice`},
		{"multi key and its label", multiIn, `["blue","Dark Blue"]`, "", `option "blue" is chosen twice`},
		{"multi duplicate in comma list", multiIn, `"red,RED"`, "", `option "red" is chosen twice`},
		{"multi number element", multiIn, `["red",1]`, "", "must be an array of option keys"},
		{"multi null element", multiIn, `["red",null]`, "", "must be an array of option keys"},
		{"multi nested array", multiIn, `[["red"]]`, "", "must be an array of option keys"},
		{"multi bool", multiIn, `true`, "", "must be an array of option keys"},
		{"multi object", multiIn, `{"red":true}`, "", "must be an array of option keys"},

		// form (schema cases in detail are in schema_test.go)
		{"form object", formIn, `{"name":"Ada","age":36}`, `{"age":36,"name":"Ada"}`, ""},
		{"form compacted", formIn, "{\n  \"name\": \"Ada\"\n}", `{"name":"Ada"}`, ""},
		{"form as JSON string", formIn, `"{\"name\": \"Ada\", \"tags\": [\"x\"]}"`, `{"name":"Ada","tags":["x"]}`, ""},
		{"form keeps extra fields", formIn, `{"name":"Ada","note":"<b>&</b>"}`, `{"name":"Ada","note":"<b>&</b>"}`, ""},
		{"form keeps number text", formIn, `{"name":"Ada","age":3.0e1}`, `{"age":3.0e1,"name":"Ada"}`, ""},
		{"form missing required", formIn, `{"age":3}`, "", "missing property 'name'"},
		{"form wrong field type", formIn, `{"name":"Ada","age":"old"}`, "", "at /age: got string, want integer"},
		{"form nested field", formIn, `{"name":"Ada","tags":["x",2]}`, "", "at /tags/1"},
		{"form array", formIn, `[{"name":"Ada"}]`, "", "form value must be an object"},
		{"form string not JSON", formIn, `"name=Ada"`, "", "form value is not valid JSON"},
		{"form string with trailing data", formIn, `"{\"name\":\"Ada\"} x"`, "", "form value is not valid JSON"},
		{"form string holding a string", formIn, `"\"{}\""`, "", "form value must be an object"},
		{"form string holding null", formIn, `"null"`, "", "form value must be an object"},
		{"form number", formIn, `5`, "", "form value must be an object"},
		{"form bool", formIn, `true`, "", "form value must be an object"},
		{"form duplicate field", formIn, `{"name":"Ada","age":"x","age":5}`, "", `field "age" twice`},
		{"form duplicate escaped field", formIn, `{"name":"Ada","n\u0061me":"Bob"}`, "", `field "name" twice`},
		{"form duplicate nested field", formIn, `{"name":"Ada","x":[{"k":1,"k":2}]}`, "", `field "k" twice`},
		{"form duplicate in JSON string", formIn, `"{\"name\":\"Ada\",\"name\":\"\"}"`, "", `field "name" twice`},

		// free_text
		{"free text", freeIn, `"hello"`, `"hello"`, ""},
		{"free text empty", freeIn, `""`, `""`, ""},
		{"free text kept verbatim", freeIn, `"  two\nlines  "`, `"  two\nlines  "`, ""},
		{"free text unicode", freeIn, `"caf\u00e9 ☕"`, `"café ☕"`, ""},
		{"free text integer", freeIn, `42`, `"42"`, ""},
		{"free text decimal", freeIn, `-3.50`, `"-3.50"`, ""},
		{"free text exponent", freeIn, `1e3`, `"1e3"`, ""},
		{"free text bool", freeIn, `false`, `"false"`, ""},
		{"free text at limit", freeIn, `"` + long + `"`, `"` + long + `"`, ""},
		{"free text too long", freeIn, `"` + long + `x"`, "", "free_text value is limited to 65536 bytes"},
		{"free text array", freeIn, `["a"]`, "", "free_text value must be a string"},
		{"free text object", freeIn, `{"text":"a"}`, "", "free_text value must be a string"},

		// any type
		{"null", freeIn, `null`, "", "value is required"},
		{"padded null", approvalIn, " null ", "", "value is required"},
		{"missing", singleIn, ``, "", "value is required"},
		{"blank", multiIn, "  \n", "", "value is required"},
		{"not JSON", approvalIn, `yes`, "", "value is not valid JSON"},
		{"two values", freeIn, `"a" "b"`, "", "value is not valid JSON"},
		{"unterminated", formIn, `{"name":"Ada"`, "", "value is not valid JSON"},
		// Regression: Decoder.More reports no more input before a stray "}"
		// or "]", so these were accepted.
		{"trailing brace", approvalIn, `true}`, "", "value is not valid JSON"},
		{"trailing bracket", singleIn, `"red"]`, "", "value is not valid JSON"},
		{"trailing brace after form", formIn, `{"name":"Ada"}}`, "", "value is not valid JSON"},
		// Regression, found by FuzzNormalizeAnswer: bytes.TrimSpace took
		// white space that JSON does not allow.
		{"vertical tab", freeIn, "0\v", "", "value is not valid JSON"},
		{"no-break space", approvalIn, "true\u00a0", "", "value is not valid JSON"},
		{"only a vertical tab", freeIn, "\v", "", "value is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := hitl.NormalizeAnswer(tt.in, json.RawMessage(tt.raw))
			if tt.err != "" {
				if err == nil {
					t.Fatalf("NormalizeAnswer(%s): got %s, want error containing %q", tt.raw, got, tt.err)
				}
				wantErr(t, err, hitl.ErrValue, tt.err)
				if errors.Is(err, hitl.ErrInvalid) {
					t.Errorf("got an error that also matches ErrInvalid: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NormalizeAnswer(%s): got error %v, want %s", tt.raw, err, tt.want)
			}
			if string(got) != tt.want {
				t.Errorf("NormalizeAnswer(%s): got %s, want %s", tt.raw, got, tt.want)
			}
			again, err := hitl.NormalizeAnswer(tt.in, got)
			if err != nil || string(again) != string(got) {
				t.Errorf("NormalizeAnswer(%s) again: got %s, %v; want %s, nil", got, again, err, got)
			}
		})
	}
}

// TestNormalizeFormInvalidUTF8 checks that bytes which are not UTF-8 inside
// a form value come out as U+FFFD, so the stored value is valid UTF-8 JSON
// (a store such as PostgreSQL's jsonb refuses anything else).
func TestNormalizeFormInvalidUTF8(t *testing.T) {
	t.Parallel()
	got, err := hitl.NormalizeAnswer(formIn, json.RawMessage("{\"name\":\"A\xffda\"}"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"name\":\"A\uFFFDda\"}"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestNormalizeAnswerLeavesInteraction checks that normalising does not
// change the interaction it reads.
func TestNormalizeAnswerLeavesInteraction(t *testing.T) {
	t.Parallel()
	in := mustCreate(hitl.CreateRequest{Type: hitl.TypeMultiChoice, Question: "q", Options: colours})
	before, _ := json.Marshal(in)
	for _, raw := range []string{`"Red, green"`, `["blue"]`, `"purple"`} {
		_, _ = hitl.NormalizeAnswer(in, json.RawMessage(raw))
	}
	after, _ := json.Marshal(in)
	if string(before) != string(after) {
		t.Errorf("interaction changed:\n got %s\nwant %s", after, before)
	}
}

// fuzzSchema covers the kinds of field a web form renders.
const fuzzSchema = `{
	"type": "object",
	"required": ["name"],
	"properties": {
		"name": {"type": "string", "minLength": 1, "maxLength": 40},
		"colour": {"type": "string", "enum": ["red", "green"]},
		"when": {"type": "string", "format": "date"},
		"n": {"type": "integer", "minimum": 0, "maximum": 10},
		"ok": {"type": "boolean"},
		"tags": {"type": "array", "items": {"type": "string"}},
		"addr": {"type": "object", "properties": {"zip": {"type": "string", "pattern": "^[0-9]+$"}}}
	}
}`

// fuzzInteractions builds one interaction of every type. The choice types
// get options made from label1 and label2, as labels and as keys, where
// they make valid options, besides fixed ones.
func fuzzInteractions(t *testing.T, label1, label2 string) []*hitl.Interaction {
	t.Helper()
	var out []*hitl.Interaction
	add := func(req hitl.CreateRequest) *hitl.Interaction {
		req.Question = "q"
		in, err := hitl.NewInteraction(req, agent, now)
		if err != nil {
			t.Fatalf("NewInteraction(%+v): %v", req, err)
		}
		out = append(out, in)
		return in
	}
	// options returns the fixed options plus each candidate that the
	// interaction type accepts alongside the ones before it.
	options := func(typ hitl.Type, fixed hitl.OptionList, candidates ...hitl.Option) hitl.OptionList {
		opts := fixed
		for _, c := range candidates {
			try := append(append(hitl.OptionList(nil), opts...), c)
			if _, err := hitl.NewInteraction(hitl.CreateRequest{Type: typ, Question: "q", Options: try}, agent, now); err == nil {
				opts = try
			}
		}
		return opts
	}
	candidates := []hitl.Option{{Label: label1}, {Label: label2}, {Key: label1, Label: label2}, {Key: label2}}
	fixed := hitl.OptionList{{Key: "red", Label: "Red"}, {Key: "a,b", Label: "A and B"}}

	add(hitl.CreateRequest{Type: hitl.TypeApproval})
	for _, approval := range []hitl.OptionList{
		{{Label: label1}, {Label: label2}},
		{{Key: label1}, {Key: label2}},
		{{Key: "yes"}, {Key: "no"}},
	} {
		req := hitl.CreateRequest{Type: hitl.TypeApproval, Question: "q", Options: approval}
		if _, err := hitl.NewInteraction(req, agent, now); err == nil {
			add(req)
			break
		}
	}
	add(hitl.CreateRequest{Type: hitl.TypeSingleChoice, Options: options(hitl.TypeSingleChoice, fixed, candidates...)})
	add(hitl.CreateRequest{Type: hitl.TypeMultiChoice, Options: options(hitl.TypeMultiChoice, fixed, candidates...)})
	add(hitl.CreateRequest{Type: hitl.TypeForm, FormSchema: json.RawMessage(fuzzSchema)})
	add(hitl.CreateRequest{Type: hitl.TypeForm, FormSchema: json.RawMessage(`{}`)})
	add(hitl.CreateRequest{Type: hitl.TypeFreeText})
	return out
}

// checkCanonical fails unless out is valid UTF-8 JSON of the canonical type
// for in.
func checkCanonical(t *testing.T, in *hitl.Interaction, out json.RawMessage) {
	t.Helper()
	if !json.Valid(out) || !utf8.Valid(out) {
		t.Fatalf("%s: output %q is not valid UTF-8 JSON", in.Type, out)
	}
	switch in.Type {
	case hitl.TypeApproval:
		if s := string(out); s != "true" && s != "false" {
			t.Fatalf("approval: got %s, want true or false", out)
		}
	case hitl.TypeSingleChoice:
		var k string
		if err := json.Unmarshal(out, &k); err != nil {
			t.Fatalf("single_choice: got %s, want a string: %v", out, err)
		}
		if _, ok := in.Option(k); !ok {
			t.Fatalf("single_choice: got %q, not an option key of %+v", k, in.Options)
		}
	case hitl.TypeMultiChoice:
		var keys []string
		if err := json.Unmarshal(out, &keys); err != nil || keys == nil {
			t.Fatalf("multi_choice: got %s, want an array of strings: %v", out, err)
		}
		seen := map[string]bool{}
		for _, k := range keys {
			if _, ok := in.Option(k); !ok {
				t.Fatalf("multi_choice: got %q in %s, not an option key of %+v", k, out, in.Options)
			}
			if seen[k] {
				t.Fatalf("multi_choice: got %q twice in %s", k, out)
			}
			seen[k] = true
		}
	case hitl.TypeForm:
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil || m == nil {
			t.Fatalf("form: got %s, want an object: %v", out, err)
		}
	case hitl.TypeFreeText:
		var s string
		if err := json.Unmarshal(out, &s); err != nil {
			t.Fatalf("free_text: got %s, want a string: %v", out, err)
		}
		if len(s) > hitl.MaxFreeTextLen {
			t.Fatalf("free_text: got %d bytes, want at most %d", len(s), hitl.MaxFreeTextLen)
		}
	}
}

func FuzzNormalizeAnswer(f *testing.F) {
	seeds := []string{
		``, `null`, `true`, `false`, `0`, `-1.5e3`, `""`, `" "`, `"yes"`, `"No"`, `"approve"`,
		`"reject"`, `"Approve"`, `"maybe"`, `"red"`, `"Red"`, `" RED "`, `"A and B"`, `"a,b"`,
		`"red,a,b"`, `"red, A and B"`, `"red,red"`, `"red,"`, `["red"]`, `["red","a,b"]`,
		`["red","red"]`, `["Red","red"]`, `[]`, `[1]`, `[null]`, `{}`, `{"name":"Ada"}`,
		`{"name":"Ada","colour":"red","when":"2026-01-31","n":3,"ok":true,"tags":["x"],"addr":{"zip":"123"}}`,
		`{"name":"","n":11,"when":"2026-02-30","addr":{"zip":"x"}}`,
		`"{\"name\":\"Ada\"}"`, `"{\"name\":\"Ada\"} x"`, `{"name":"Ada","name":"Bob"}`,
		`{"name":"A\u0000da"}`, "{\"name\":\"A\xffda\"}", "\"\xff\xfe\"", `"\ud800"`,
		`true}`, `"red"]`, `{"name":"Ada"}}`, `"a" "b"`, `[[["x"]]]`, `{"a":{"b":{"c":[1,2,{"d":null}]}}}`,
		`1e999`, `"<b>&</b>"`, ` "yes" `, "\"line\nbreak\"",
	}
	labels := [][2]string{
		{"Yes", "No"}, {"Ship it", "Hold"}, {"red", "Red"}, {"A and B", "a,b"}, {"", ""},
		{"是", "否"}, {" spaced ", "x,y"}, {"\xff", "ok"}, {"no", "yes"}, {"a", "A"},
	}
	for i, s := range seeds {
		l := labels[i%len(labels)]
		f.Add([]byte(s), l[0], l[1])
	}
	f.Fuzz(func(t *testing.T, raw []byte, label1, label2 string) {
		for _, in := range fuzzInteractions(t, label1, label2) {
			out, err := hitl.NormalizeAnswer(in, raw)
			if err != nil {
				if hitl.ErrorCode(err) != hitl.EVALUE {
					t.Fatalf("%s %q: got error %v with code %q, want %q", in.Type, raw, err, hitl.ErrorCode(err), hitl.EVALUE)
				}
				continue
			}
			if !json.Valid(raw) {
				t.Fatalf("%s: accepted %q, which is not JSON, as %s", in.Type, raw, out)
			}
			checkCanonical(t, in, out)
			again, err := hitl.NormalizeAnswer(in, out)
			if err != nil {
				t.Fatalf("%s %q: normalised to %s, which then fails: %v", in.Type, raw, out, err)
			}
			if string(again) != string(out) {
				t.Fatalf("%s %q: normalised to %s, then to %s; want idempotent", in.Type, raw, out, again)
			}
		}
	})
}

func ExampleNormalizeAnswer() {
	in, err := hitl.NewInteraction(hitl.CreateRequest{
		Type:     hitl.TypeMultiChoice,
		Question: "Which regions?",
		Options:  hitl.OptionList{{Key: "eu", Label: "Europe"}, {Key: "us", Label: "United States"}},
	}, hitl.Caller{Name: "agent"}, time.Now())
	if err != nil {
		panic(err)
	}
	// An older client sends labels as one comma-separated string.
	v, err := hitl.NormalizeAnswer(in, json.RawMessage(`"Europe, united states"`))
	fmt.Println(string(v), err)
	// An unknown option is refused with the reason.
	_, err = hitl.NormalizeAnswer(in, json.RawMessage(`["eu","asia"]`))
	fmt.Println(hitl.ErrorCode(err), hitl.ErrorMessage(err))
	// Output:
	// ["eu","us"] <nil>
	// invalid_value "asia" is not an option; choose from ["eu","us"]
}
