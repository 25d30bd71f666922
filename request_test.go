package hitl_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// now is the creation time used throughout; it has sub-millisecond digits
// so truncation shows.
var now = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)

var agent = hitl.Caller{Name: "agent-1", Channel: hitl.ChannelAPI}

// create calls NewInteraction and fails the test if it returns an error.
func create(t *testing.T, req hitl.CreateRequest) *hitl.Interaction {
	t.Helper()
	in, err := hitl.NewInteraction(req, agent, now)
	if err != nil {
		t.Fatalf("NewInteraction(%+v): %v", req, err)
	}
	return in
}

// createJSON decodes body as a CreateRequest, the way the HTTP API does,
// and creates the interaction.
func createJSON(t *testing.T, body string) *hitl.Interaction {
	t.Helper()
	var req hitl.CreateRequest
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return create(t, req)
}

// wantErr checks that err is an application error with the given code whose
// message contains every one of substrs.
func wantErr(t *testing.T, err error, code *hitl.Error, substrs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s containing %q", code.Code, substrs)
	}
	if !errors.Is(err, code) {
		t.Fatalf("got error %v (code %q), want code %q", err, hitl.ErrorCode(err), code.Code)
	}
	msg := hitl.ErrorMessage(err)
	for _, s := range substrs {
		if !strings.Contains(msg, s) {
			t.Errorf("got message %q, want it to contain %q", msg, s)
		}
	}
}

func TestNewInteractionDefaults(t *testing.T) {
	t.Parallel()
	in := create(t, hitl.CreateRequest{Question: "  What next?\n"})

	if got, want := in.Type, hitl.TypeFreeText; got != want {
		t.Errorf("Type: got %q, want %q", got, want)
	}
	if got, want := in.Question, "What next?"; got != want {
		t.Errorf("Question: got %q, want %q", got, want)
	}
	if got, want := in.Status, hitl.StatusPending; got != want {
		t.Errorf("Status: got %q, want %q", got, want)
	}
	if got, want := in.OnTimeout, hitl.OnTimeoutCancel; got != want {
		t.Errorf("OnTimeout: got %q, want %q", got, want)
	}
	if in.Options == nil || len(in.Options) != 0 {
		t.Errorf("Options: got %#v, want an empty non-nil slice (encoded as [])", in.Options)
	}
	created := now.Truncate(time.Millisecond)
	if got, want := in.CreatedAt, created; !got.Equal(want) {
		t.Errorf("CreatedAt: got %v, want %v", got, want)
	}
	if got, want := in.Deadline, created.Add(hitl.DefaultTimeout); !got.Equal(want) {
		t.Errorf("Deadline: got %v, want %v", got, want)
	}
	if got, want := in.Timeout, hitl.DefaultTimeout.Seconds(); got != want {
		t.Errorf("Timeout: got %v, want %v", got, want)
	}
	if got, want := in.CreatedBy, agent.Name; got != want {
		t.Errorf("CreatedBy: got %q, want %q", got, want)
	}
	if got, want := in.CreatedVia, agent.Channel; got != want {
		t.Errorf("CreatedVia: got %q, want %q", got, want)
	}
	if in.ID != "" {
		t.Errorf("ID: got %q, want it left empty for the caller", in.ID)
	}
	if in.Targets != nil {
		t.Errorf("Targets: got %+v, want nil", in.Targets)
	}
	if in.RequestHash == "" {
		t.Errorf("RequestHash is empty")
	}
	if in.Result != nil || in.DefaultResponse != nil || in.FormSchema != nil {
		t.Errorf("got Result %v, DefaultResponse %s, FormSchema %s; want all empty", in.Result, in.DefaultResponse, in.FormSchema)
	}
}

func TestNewInteractionRejects(t *testing.T) {
	t.Parallel()
	choice := []hitl.Option{{Key: "a", Label: "A"}, {Key: "b", Label: "B"}}
	form := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)
	past := now.Add(-time.Second)
	tooFar := now.Add(hitl.MaxTimeout + time.Second)
	manyOptions := make([]hitl.Option, hitl.MaxOptions+1)
	for i := range manyOptions {
		manyOptions[i] = hitl.Option{Key: fmt.Sprint("k", i)}
	}

	tests := []struct {
		name string
		req  hitl.CreateRequest
		want []string // substrings of the message
	}{
		{"unknown type", hitl.CreateRequest{Type: "yes_no", Question: "q"}, []string{"interaction_type", `"yes_no"`}},
		{"empty question", hitl.CreateRequest{}, []string{"question is required"}},
		{"blank question", hitl.CreateRequest{Question: " \t\n "}, []string{"question is required"}},
		{"question too long", hitl.CreateRequest{Question: strings.Repeat("x", hitl.MaxQuestionLen+1)}, []string{"question is limited"}},
		{"context too long", hitl.CreateRequest{Question: "q", Context: strings.Repeat("x", hitl.MaxContextLen+1)}, []string{"context"}},
		{"question not UTF-8", hitl.CreateRequest{Question: "q\xff"}, []string{"UTF-8"}},
		{"context not UTF-8", hitl.CreateRequest{Question: "q", Context: "\xc3"}, []string{"UTF-8"}},
		{"question with NUL", hitl.CreateRequest{Question: "q\x00q"}, []string{"NUL"}},
		{"context with NUL", hitl.CreateRequest{Question: "q", Context: "a\x00"}, []string{"NUL"}},
		{"idempotency key with NUL", hitl.CreateRequest{Question: "q", IdempotencyKey: "k\x00"}, []string{"idempotency_key", "NUL"}},
		{"source agent with NUL", hitl.CreateRequest{Question: "q", SourceAgent: "\x00"}, []string{"source_agent", "NUL"}},
		{"session id not UTF-8", hitl.CreateRequest{Question: "q", SessionID: "s\xff"}, []string{"session_id", "UTF-8"}},
		{"idempotency key too long", hitl.CreateRequest{Question: "q", IdempotencyKey: strings.Repeat("k", hitl.MaxKeyLen+1)}, []string{"idempotency_key"}},
		{"unknown on_timeout", hitl.CreateRequest{Question: "q", OnTimeout: "approve"}, []string{"on_timeout", `"approve"`}},

		{"single_choice without options", hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "q"}, []string{"single_choice needs at least one option"}},
		{"multi_choice without options", hitl.CreateRequest{Type: hitl.TypeMultiChoice, Question: "q", Options: hitl.OptionList{}}, []string{"multi_choice needs at least one option"}},
		{"duplicate keys", hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "q", Options: hitl.OptionList{{Key: "a"}, {Key: "b"}, {Key: " a "}}}, []string{"unique", `"a"`}},
		{"duplicate derived keys", hitl.CreateRequest{Type: hitl.TypeMultiChoice, Question: "q", Options: hitl.OptionList{{Label: "Yes"}, {Label: "yes!"}}}, []string{"unique", `"yes"`}},
		{"empty key and label", hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "q", Options: hitl.OptionList{{Key: "a"}, {Key: "  "}}}, []string{"option 1 needs a non-empty key"}},
		{"label of only spaces", hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "q", Options: hitl.OptionList{{Label: "   "}}}, []string{"option 0 needs a non-empty key"}},
		{"key too long", hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "q", Options: hitl.OptionList{{Key: strings.Repeat("k", hitl.MaxKeyLen+1)}}}, []string{"options[0].key is limited to 200 bytes; got 201"}},
		{"label not UTF-8", hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "q", Options: hitl.OptionList{{Key: "a", Label: "\xff"}}}, []string{"option 0", "UTF-8"}},
		{"key not UTF-8", hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "q", Options: hitl.OptionList{{Label: "\xfe\xff"}}}, []string{"option 0", "UTF-8"}},
		{"too many options", hitl.CreateRequest{Type: hitl.TypeMultiChoice, Question: "q", Options: manyOptions}, []string{"options: at most 100 options; got 101"}},
		{"options for free_text", hitl.CreateRequest{Question: "q", Options: choice}, []string{"free_text takes no options"}},
		{"options for form", hitl.CreateRequest{Type: hitl.TypeForm, Question: "q", Options: choice, FormSchema: form}, []string{"form takes no options"}},
		{"approval with three options", hitl.CreateRequest{Type: hitl.TypeApproval, Question: "q", Options: hitl.OptionList{{Key: "y"}, {Key: "n"}, {Key: "m"}}}, []string{"exactly two options", "got 3"}},
		{"approval with one option", hitl.CreateRequest{Type: hitl.TypeApproval, Question: "q", Options: hitl.OptionList{{Key: "y"}}}, []string{"exactly two options", "got 1"}},

		{"form without schema", hitl.CreateRequest{Type: hitl.TypeForm, Question: "q"}, []string{"form needs a form_schema"}},
		{"form with null schema", hitl.CreateRequest{Type: hitl.TypeForm, Question: "q", FormSchema: json.RawMessage(" null ")}, []string{"form needs a form_schema"}},
		{"schema on free_text", hitl.CreateRequest{Question: "q", FormSchema: form}, []string{"form_schema is only for interaction_type form"}},
		{"schema on approval", hitl.CreateRequest{Type: hitl.TypeApproval, Question: "q", FormSchema: form}, []string{"form_schema is only for"}},

		{"on_timeout default without default_response", hitl.CreateRequest{Type: hitl.TypeApproval, Question: "q", OnTimeout: hitl.OnTimeoutDefault}, []string{"default_response"}},
		{"on_timeout default with null default_response", hitl.CreateRequest{Question: "q", OnTimeout: hitl.OnTimeoutDefault, DefaultResponse: json.RawMessage("null")}, []string{"default_response"}},
		{"approval default not a decision", hitl.CreateRequest{Type: hitl.TypeApproval, Question: "q", OnTimeout: hitl.OnTimeoutDefault, DefaultResponse: json.RawMessage(`"maybe"`)}, []string{"default_response", "approval value must be true or false"}},
		{"single_choice default not an option", hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "q", Options: choice, DefaultResponse: json.RawMessage(`"c"`)}, []string{"default_response", `"c" is not an option`}},
		{"multi_choice default repeats", hitl.CreateRequest{Type: hitl.TypeMultiChoice, Question: "q", Options: choice, OnTimeout: hitl.OnTimeoutDefault, DefaultResponse: json.RawMessage(`["a","A"]`)}, []string{"default_response", "twice"}},
		{"form default fails schema", hitl.CreateRequest{Type: hitl.TypeForm, Question: "q", FormSchema: form, DefaultResponse: json.RawMessage(`{"name":5}`)}, []string{"default_response", "/name"}},
		{"free_text default is an object", hitl.CreateRequest{Question: "q", DefaultResponse: json.RawMessage(`{}`)}, []string{"default_response", "must be a string"}},
		{"default not JSON", hitl.CreateRequest{Question: "q", DefaultResponse: json.RawMessage(`yes`)}, []string{"default_response", "not valid JSON"}},

		{"deadline in the past", hitl.CreateRequest{Question: "q", Deadline: &past}, []string{"deadline must be in the future"}},
		{"deadline now", hitl.CreateRequest{Question: "q", Deadline: &now}, []string{"deadline must be in the future"}},
		{"deadline too far", hitl.CreateRequest{Question: "q", Deadline: &tooFar}, []string{"deadline is at most"}},
		{"negative timeout", hitl.CreateRequest{Question: "q", Timeout: -1}, []string{"timeout must be a positive number"}},
		{"NaN timeout", hitl.CreateRequest{Question: "q", Timeout: math.NaN()}, []string{"timeout must be a positive number"}},
		{"infinite timeout", hitl.CreateRequest{Question: "q", Timeout: math.Inf(1)}, []string{"timeout must be a positive number"}},
		{"timeout over max", hitl.CreateRequest{Question: "q", Timeout: hitl.MaxTimeout.Seconds() + 1}, []string{"timeout is at most 2592000 seconds"}},
		{"huge timeout", hitl.CreateRequest{Question: "q", Timeout: 1e300}, []string{"timeout is at most"}},
		{"timeout under a millisecond", hitl.CreateRequest{Question: "q", Timeout: 0.0004}, []string{"at least a millisecond"}},

		{"target user with NUL", hitl.CreateRequest{Question: "q", Targets: &hitl.Targets{Users: []string{"al\x00ice"}}}, []string{"targets.users[0] must be valid UTF-8 without NUL bytes"}},
		{"empty target user", hitl.CreateRequest{Question: "q", Targets: &hitl.Targets{Users: []string{"alice", " "}}}, []string{"targets", "user 1 is empty"}},
		{"empty target group", hitl.CreateRequest{Question: "q", Targets: &hitl.Targets{Groups: []string{""}}}, []string{"targets", "group 0 is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in, err := hitl.NewInteraction(tt.req, agent, now)
			if err == nil {
				t.Fatalf("got interaction %+v, want an error", in)
			}
			if in != nil {
				t.Errorf("got interaction %+v along with the error, want nil", in)
			}
			wantErr(t, err, hitl.ErrInvalid, tt.want...)
		})
	}
}

// TestNewInteractionLimits checks every field's limit: at the limit it is
// accepted, one byte (or item) over it is refused with a message naming
// the field and the limit.
func TestNewInteractionLimits(t *testing.T) {
	t.Parallel()
	options := func(n int, key, label, desc string) hitl.OptionList {
		out := make(hitl.OptionList, n)
		for i := range out {
			out[i] = hitl.Option{Key: fmt.Sprintf("%03d", i) + key, Label: label, Description: desc}
		}
		return out
	}
	names := func(n, size int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%03d", i) + strings.Repeat("n", size-3)
		}
		return out
	}
	// A metadata object of n bytes, encoded.
	metadata := func(n int) map[string]any {
		return map[string]any{"k": strings.Repeat("m", n-len(`{"k":""}`))}
	}
	choice := func(o hitl.OptionList) hitl.CreateRequest {
		return hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "q", Options: o}
	}
	tests := []struct {
		name     string
		at, over hitl.CreateRequest
		wantOver string
	}{
		{"question",
			hitl.CreateRequest{Question: strings.Repeat("q", hitl.MaxQuestionLen)},
			hitl.CreateRequest{Question: strings.Repeat("q", hitl.MaxQuestionLen+1)},
			"question is limited to 16384 bytes; got 16385"},
		{"context",
			hitl.CreateRequest{Question: "q", Context: strings.Repeat("c", hitl.MaxContextLen)},
			hitl.CreateRequest{Question: "q", Context: strings.Repeat("c", hitl.MaxContextLen+1)},
			"context is limited to 65536 bytes; got 65537"},
		{"idempotency_key",
			hitl.CreateRequest{Question: "q", IdempotencyKey: strings.Repeat("k", hitl.MaxKeyLen)},
			hitl.CreateRequest{Question: "q", IdempotencyKey: strings.Repeat("k", hitl.MaxKeyLen+1)},
			"idempotency_key is limited to 200 bytes; got 201"},
		{"source_agent",
			hitl.CreateRequest{Question: "q", SourceAgent: strings.Repeat("a", hitl.MaxProvenanceLen)},
			hitl.CreateRequest{Question: "q", SourceAgent: strings.Repeat("a", hitl.MaxProvenanceLen+1)},
			"source_agent is limited to 200 bytes; got 201"},
		{"session_id",
			hitl.CreateRequest{Question: "q", SessionID: strings.Repeat("s", hitl.MaxProvenanceLen)},
			hitl.CreateRequest{Question: "q", SessionID: strings.Repeat("s", hitl.MaxProvenanceLen+1)},
			"session_id is limited to 200 bytes; got 201"},
		{"options",
			choice(options(hitl.MaxOptions, "", "", "")),
			choice(options(hitl.MaxOptions+1, "", "", "")),
			"options: at most 100 options; got 101"},
		{"option key",
			choice(options(1, strings.Repeat("k", hitl.MaxKeyLen-3), "", "")),
			choice(options(1, strings.Repeat("k", hitl.MaxKeyLen-2), "", "")),
			"options[0].key is limited to 200 bytes; got 201"},
		{"option label",
			choice(options(2, "", strings.Repeat("l", hitl.MaxLabelLen), "")),
			choice(options(2, "", strings.Repeat("l", hitl.MaxLabelLen+1), "")),
			"options[0].label is limited to 200 bytes; got 201"},
		{"option description",
			choice(options(2, "", "L", strings.Repeat("d", hitl.MaxDescriptionLen))),
			choice(options(2, "", "L", strings.Repeat("d", hitl.MaxDescriptionLen+1))),
			"options[0].description is limited to 1024 bytes; got 1025"},
		{"metadata",
			hitl.CreateRequest{Question: "q", Metadata: metadata(hitl.MaxMetadataLen)},
			hitl.CreateRequest{Question: "q", Metadata: metadata(hitl.MaxMetadataLen + 1)},
			"metadata is limited to 16384 bytes of JSON; got 16385"},
		{"target users",
			hitl.CreateRequest{Question: "q", Targets: &hitl.Targets{Users: names(hitl.MaxTargets, hitl.MaxNameLen)}},
			hitl.CreateRequest{Question: "q", Targets: &hitl.Targets{Users: names(hitl.MaxTargets+1, 8)}},
			"targets: at most 100 users; got 101"},
		{"target groups",
			hitl.CreateRequest{Question: "q", Targets: &hitl.Targets{Groups: names(hitl.MaxTargets, 8)}},
			hitl.CreateRequest{Question: "q", Targets: &hitl.Targets{Groups: names(hitl.MaxTargets+1, 8)}},
			"targets: at most 100 groups; got 101"},
		{"target user name",
			hitl.CreateRequest{Question: "q", Targets: &hitl.Targets{Users: names(1, hitl.MaxNameLen)}},
			hitl.CreateRequest{Question: "q", Targets: &hitl.Targets{Users: names(1, hitl.MaxNameLen+1)}},
			"targets.users[0] is limited to 64 bytes; got 65"},
		{"target group name",
			hitl.CreateRequest{Question: "q", Targets: &hitl.Targets{Groups: names(1, hitl.MaxNameLen)}},
			hitl.CreateRequest{Question: "q", Targets: &hitl.Targets{Groups: names(1, hitl.MaxNameLen+1)}},
			"targets.groups[0] is limited to 64 bytes; got 65"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := hitl.NewInteraction(tt.at, agent, now); err != nil {
				t.Errorf("at the limit: %v", err)
			}
			_, err := hitl.NewInteraction(tt.over, agent, now)
			if hitl.ErrorCode(err) != hitl.EINVALID || hitl.ErrorMessage(err) != tt.wantOver {
				t.Errorf("over the limit: %v, want %s %q", err, hitl.EINVALID, tt.wantOver)
			}
		})
	}
}

func TestNewInteractionSchemaRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema string
		want   string
	}{
		{"not JSON", `{"type":`, "not valid JSON"},
		{"array", `[{"type":"object"}]`, "must be a JSON Schema object"},
		{"boolean schema", `true`, "must be a JSON Schema object"},
		{"string schema", `"object"`, "must be a JSON Schema object"},
		{"type string", `{"type":"string"}`, `must describe an object`},
		{"type list", `{"type":["object","null"]}`, `must describe an object`},
		{"bad keyword value", `{"type":"object","properties":{"n":{"type":"integer","minimum":"one"}}}`, "not a valid JSON Schema"},
		{"unknown type name", `{"type":"object","properties":{"n":{"type":"int"}}}`, "not a valid JSON Schema"},
		{"bad pattern", `{"type":"object","properties":{"s":{"type":"string","pattern":"(?=x)"}}}`, "not a valid JSON Schema"},
		{"dangling local ref", `{"type":"object","properties":{"s":{"$ref":"#/$defs/missing"}}}`, "not a valid JSON Schema"},
		{"relative ref", `{"type":"object","properties":{"s":{"$ref":"other.json"}}}`, "not a valid JSON Schema"},
		{"unknown metaschema", `{"$schema":"https://example.invalid/schema","type":"object"}`, "form_schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := hitl.NewInteraction(hitl.CreateRequest{Type: hitl.TypeForm, Question: "q", FormSchema: json.RawMessage(tt.schema)}, agent, now)
			wantErr(t, err, hitl.ErrInvalid, tt.want)
		})
	}
}

// TestSchemaRefsAreNotLoaded checks that a form schema cannot make the
// server read a file or fetch a URL: both targets exist and hold valid
// schemas, so loading them would make compilation succeed.
func TestSchemaRefsAreNotLoaded(t *testing.T) {
	t.Parallel()
	const target = `{"type":"string"}`

	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		fmt.Fprint(w, target)
	}))
	t.Cleanup(srv.Close)

	file := filepath.Join(t.TempDir(), "string.json")
	if err := os.WriteFile(file, []byte(target), 0o600); err != nil {
		t.Fatal(err)
	}

	refs := map[string]string{
		"file URL":               "file://" + filepath.ToSlash(file),
		"file path":              file,
		"http URL":               srv.URL + "/string.json",
		"http URL with fragment": srv.URL + "/base.json#",
		"https URL":              strings.Replace(srv.URL, "http:", "https:", 1) + "/string.json",
	}
	for name, ref := range refs {
		t.Run(name, func(t *testing.T) {
			schema, _ := json.Marshal(map[string]any{
				"type":       "object",
				"properties": map[string]any{"s": map[string]any{"$ref": ref}},
			})
			_, err := hitl.NewInteraction(hitl.CreateRequest{Type: hitl.TypeForm, Question: "q", FormSchema: schema}, agent, now)
			wantErr(t, err, hitl.ErrInvalid, "form_schema")
		})
	}
	t.Run("$id pointing at the server", func(t *testing.T) {
		schema, _ := json.Marshal(map[string]any{
			"$id":        srv.URL + "/root.json",
			"type":       "object",
			"properties": map[string]any{"s": map[string]any{"$ref": "string.json"}},
		})
		_, err := hitl.NewInteraction(hitl.CreateRequest{Type: hitl.TypeForm, Question: "q", FormSchema: schema}, agent, now)
		wantErr(t, err, hitl.ErrInvalid, "form_schema")
	})
	t.Run("$schema pointing at the server", func(t *testing.T) {
		schema, _ := json.Marshal(map[string]any{"$schema": srv.URL + "/meta.json", "type": "object"})
		_, err := hitl.NewInteraction(hitl.CreateRequest{Type: hitl.TypeForm, Question: "q", FormSchema: schema}, agent, now)
		wantErr(t, err, hitl.ErrInvalid, "form_schema")
	})
	// Subtests above are not parallel, so every request has been made by now.
	if got := hits.Load(); got != 0 {
		t.Errorf("the schema compiler made %d HTTP requests, want 0", got)
	}
}

func TestSchemaInternalRefs(t *testing.T) {
	t.Parallel()
	in := create(t, hitl.CreateRequest{Type: hitl.TypeForm, Question: "q", FormSchema: json.RawMessage(`{
		"type": "object",
		"$defs": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
		"properties": {"home": {"$ref": "#/$defs/zip"}, "work": {"$ref": "#/$defs/zip"}}
	}`)})
	if _, err := hitl.NormalizeAnswer(in, json.RawMessage(`{"home":"12345","work":"54321"}`)); err != nil {
		t.Errorf("valid value: got %v, want no error", err)
	}
	_, err := hitl.NormalizeAnswer(in, json.RawMessage(`{"home":"12345","work":"5432"}`))
	wantErr(t, err, hitl.ErrValue, "/work")
}

func TestNewInteractionSchemaCompacted(t *testing.T) {
	t.Parallel()
	in := create(t, hitl.CreateRequest{Type: hitl.TypeForm, Question: "q", FormSchema: json.RawMessage("{\n  \"type\": \"object\"\n}\n")})
	if got, want := string(in.FormSchema), `{"type":"object"}`; got != want {
		t.Errorf("FormSchema: got %s, want %s", got, want)
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	in := createJSON(t, `{
		"interaction_type": "single_choice",
		"question": "Which?",
		"options": [
			"Ship it!",
			"  Hold off ",
			{"key": " x ", "label": "The X", "description": "about x"},
			{"label": "Only a label"},
			{"key": "only_key"},
			"Ça va?",
			"是"
		]
	}`)
	want := []hitl.Option{
		{Key: "ship_it", Label: "Ship it!"},
		{Key: "hold_off", Label: "  Hold off "},
		{Key: "x", Label: "The X", Description: "about x"},
		{Key: "only_a_label", Label: "Only a label"},
		{Key: "only_key", Label: "only_key"},
		{Key: "ça_va", Label: "Ça va?"},
		{Key: "是", Label: "是"},
	}
	if !reflect.DeepEqual(in.Options, want) {
		t.Errorf("Options:\n got %+v\nwant %+v", in.Options, want)
	}
}

func TestOptionsDoNotAliasRequest(t *testing.T) {
	t.Parallel()
	opts := hitl.OptionList{{Label: "Red"}, {Key: " blue "}}
	targets := &hitl.Targets{Users: []string{" alice "}}
	in := create(t, hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "q", Options: opts, Targets: targets})
	if got, want := opts, (hitl.OptionList{{Label: "Red"}, {Key: " blue "}}); !reflect.DeepEqual(got, want) {
		t.Errorf("request options changed: got %+v, want %+v", got, want)
	}
	if got, want := targets.Users[0], " alice "; got != want {
		t.Errorf("request targets changed: got %q, want %q", got, want)
	}
	if got, want := in.Targets.Users, []string{"alice"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Targets.Users: got %q, want %q", got, want)
	}
}

// TestMetadataIsCopiedAsJSON: an interaction's metadata shares nothing
// with the request, and holds what a store reads back (numbers as float64).
func TestMetadataIsCopiedAsJSON(t *testing.T) {
	t.Parallel()
	meta := map[string]any{"run": 7, "tags": []string{"a"}}
	in := create(t, hitl.CreateRequest{Question: "q", Metadata: meta})
	meta["run"] = 8
	want := map[string]any{"run": 7.0, "tags": []any{"a"}}
	if !reflect.DeepEqual(in.Metadata, want) {
		t.Errorf("Metadata = %#v, want %#v", in.Metadata, want)
	}
	_, err := hitl.NewInteraction(hitl.CreateRequest{Question: "q", Metadata: map[string]any{"f": func() {}}}, hitl.Caller{Name: "a"}, time.Now())
	if hitl.ErrorCode(err) != hitl.EINVALID {
		t.Errorf("metadata that is not JSON: err = %v, want EINVALID", err)
	}
}

func TestOptionListUnmarshalErrors(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"question":"q","options":5}`,
		`{"question":"q","options":"a,b"}`,
		`{"question":"q","options":[5]}`,
		`{"question":"q","options":[["a"]]}`,
		`{"question":"q","options":[{"key":5}]}`,
	} {
		var req hitl.CreateRequest
		if err := json.Unmarshal([]byte(body), &req); err == nil {
			t.Errorf("decode %s: got options %+v, want an error", body, req.Options)
		}
	}
	var req hitl.CreateRequest
	if err := json.Unmarshal([]byte(`{"question":"q","options":null}`), &req); err != nil {
		t.Errorf("decode null options: got %v, want no error", err)
	}
	if len(req.Options) != 0 {
		t.Errorf("null options: got %+v, want none", req.Options)
	}
}

func TestDeriveKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ label, want string }{
		{"Yes", "yes"},
		{"  Ship it! ", "ship_it"},
		{"Option #2 (recommended)", "option_2_recommended"},
		{"C++", "c"},
		{"already_a_key", "already_a_key"},
		{"Über große Änderung", "über_große_änderung"},
		{"Ça va?", "ça_va"},
		{"是", "是"},
		{"日本 語", "日本_語"},
		{"???", "???"},
		{"  👍  ", "👍"},
		{"", ""},
		{"   ", ""},
	}
	for _, tt := range tests {
		if got := hitl.DeriveKey(tt.label); got != tt.want {
			t.Errorf("DeriveKey(%q): got %q, want %q", tt.label, got, tt.want)
		}
	}
}

func TestApprovalOptions(t *testing.T) {
	t.Parallel()
	in := create(t, hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Deploy?"})
	want := []hitl.Option{{Key: "approve", Label: "Approve"}, {Key: "reject", Label: "Reject"}}
	if !reflect.DeepEqual(in.Options, want) {
		t.Errorf("default approval options: got %+v, want %+v", in.Options, want)
	}

	in = createJSON(t, `{"interaction_type":"approval","question":"Deploy?","options":["Yes, deploy","No"]}`)
	want = []hitl.Option{{Key: "yes_deploy", Label: "Yes, deploy"}, {Key: "no", Label: "No"}}
	if !reflect.DeepEqual(in.Options, want) {
		t.Errorf("given approval options: got %+v, want %+v", in.Options, want)
	}
}

func TestDefaultResponse(t *testing.T) {
	t.Parallel()
	choice := hitl.OptionList{{Key: "red", Label: "Red"}, {Key: "blue", Label: "Dark Blue"}}
	tests := []struct {
		name string
		req  hitl.CreateRequest
		want string
	}{
		{"approval word", hitl.CreateRequest{Type: hitl.TypeApproval, OnTimeout: hitl.OnTimeoutDefault, DefaultResponse: json.RawMessage(`"no"`)}, `false`},
		{"approval bool", hitl.CreateRequest{Type: hitl.TypeApproval, OnTimeout: hitl.OnTimeoutDefault, DefaultResponse: json.RawMessage(` true `)}, `true`},
		{"single_choice label", hitl.CreateRequest{Type: hitl.TypeSingleChoice, Options: choice, OnTimeout: hitl.OnTimeoutDefault, DefaultResponse: json.RawMessage(`"Dark Blue"`)}, `"blue"`},
		{"multi_choice comma list", hitl.CreateRequest{Type: hitl.TypeMultiChoice, Options: choice, DefaultResponse: json.RawMessage(`"red, Dark Blue"`)}, `["red","blue"]`},
		{"form as string", hitl.CreateRequest{Type: hitl.TypeForm, FormSchema: json.RawMessage(`{"type":"object"}`), OnTimeout: hitl.OnTimeoutDefault, DefaultResponse: json.RawMessage(`"{ \"a\": 1 }"`)}, `{"a":1}`},
		{"free_text number", hitl.CreateRequest{OnTimeout: hitl.OnTimeoutDefault, DefaultResponse: json.RawMessage(`42`)}, `"42"`},
		{"prefill only, on_timeout cancel", hitl.CreateRequest{DefaultResponse: json.RawMessage(`"draft"`)}, `"draft"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.req.Question = "q"
			in := create(t, tt.req)
			if got := string(in.DefaultResponse); got != tt.want {
				t.Errorf("DefaultResponse: got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	t.Parallel()
	created := now.Truncate(time.Millisecond)
	inAnHour := now.Add(time.Hour + 987654*time.Nanosecond)
	nearlyNow := now.Add(500 * time.Microsecond) // truncates to before now
	later := now.Add(2 * time.Hour)
	local := time.Date(2026, 3, 4, 12, 0, 0, 0, time.FixedZone("UTC+5", 5*3600)) // 07:00 UTC

	tests := []struct {
		name         string
		req          hitl.CreateRequest
		wantDeadline time.Time
		wantTimeout  float64
	}{
		{"default one hour", hitl.CreateRequest{}, created.Add(time.Hour), 3600},
		{"timeout seconds", hitl.CreateRequest{Timeout: 90}, created.Add(90 * time.Second), 90},
		{"fractional timeout", hitl.CreateRequest{Timeout: 1.5}, created.Add(1500 * time.Millisecond), 1.5},
		{"timeout of a millisecond", hitl.CreateRequest{Timeout: 0.001}, created.Add(time.Millisecond), 0.001},
		{"max timeout", hitl.CreateRequest{Timeout: hitl.MaxTimeout.Seconds()}, created.Add(hitl.MaxTimeout), hitl.MaxTimeout.Seconds()},
		{"deadline truncated to ms", hitl.CreateRequest{Deadline: &inAnHour}, inAnHour.Truncate(time.Millisecond), 3600.001},
		{"deadline wins over timeout", hitl.CreateRequest{Deadline: &later, Timeout: 10}, later.Truncate(time.Millisecond), 7200},
		{"deadline in another zone", hitl.CreateRequest{Deadline: &local}, local.UTC(), 6832.877},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.req.Question = "q"
			in := create(t, tt.req)
			if !in.Deadline.Equal(tt.wantDeadline) {
				t.Errorf("Deadline: got %v, want %v", in.Deadline, tt.wantDeadline)
			}
			if in.Deadline.Location() != time.UTC {
				t.Errorf("Deadline location: got %v, want UTC", in.Deadline.Location())
			}
			if in.Deadline.Nanosecond()%int(time.Millisecond) != 0 {
				t.Errorf("Deadline %v has sub-millisecond digits", in.Deadline)
			}
			if math.Abs(in.Timeout-tt.wantTimeout) > 1e-9 {
				t.Errorf("Timeout: got %v, want %v", in.Timeout, tt.wantTimeout)
			}
			if in.Expired(in.CreatedAt) {
				t.Errorf("Expired at creation: deadline %v, created %v", in.Deadline, in.CreatedAt)
			}
			if !in.Expired(in.Deadline) {
				t.Errorf("not Expired at its deadline %v", in.Deadline)
			}
		})
	}

	t.Run("deadline less than a millisecond away", func(t *testing.T) {
		t.Parallel()
		_, err := hitl.NewInteraction(hitl.CreateRequest{Question: "q", Deadline: &nearlyNow}, agent, now)
		wantErr(t, err, hitl.ErrInvalid, "deadline must be in the future")
	})
}

func TestRequestHash(t *testing.T) {
	t.Parallel()
	base := func() hitl.CreateRequest {
		return hitl.CreateRequest{
			Type:     hitl.TypeSingleChoice,
			Question: "Which colour?",
			Context:  "For the logo.",
			Options:  hitl.OptionList{{Key: "red", Label: "Red"}, {Key: "blue", Label: "Blue"}},
		}
	}
	hash := func(req hitl.CreateRequest) string {
		t.Helper()
		return create(t, req).RequestHash
	}
	want := hash(base())

	same := map[string]func(*hitl.CreateRequest){
		"identical":        func(*hitl.CreateRequest) {},
		"question spacing": func(r *hitl.CreateRequest) { r.Question = "  Which colour?\n" },
		"labels filled in": func(r *hitl.CreateRequest) {
			r.Options = hitl.OptionList{{Key: "red", Label: "Red"}, {Key: " blue ", Label: "Blue"}}
		},
		"timeout":               func(r *hitl.CreateRequest) { r.Timeout = 60 },
		"idempotency key":       func(r *hitl.CreateRequest) { r.IdempotencyKey = "k1" },
		"metadata":              func(r *hitl.CreateRequest) { r.Metadata = map[string]any{"run": 7} },
		"source agent, session": func(r *hitl.CreateRequest) { r.SourceAgent, r.SessionID = "bot", "s1" },
		"empty targets":         func(r *hitl.CreateRequest) { r.Targets = &hitl.Targets{} },
	}
	for name, change := range same {
		req := base()
		change(&req)
		if got := hash(req); got != want {
			t.Errorf("%s: got hash %s, want the same as the base request %s", name, got, want)
		}
	}

	different := map[string]func(*hitl.CreateRequest){
		"question":     func(r *hitl.CreateRequest) { r.Question = "Which color?" },
		"targets":      func(r *hitl.CreateRequest) { r.Targets = &hitl.Targets{Users: []string{"alice"}} },
		"context":      func(r *hitl.CreateRequest) { r.Context = "For the website." },
		"type":         func(r *hitl.CreateRequest) { r.Type = hitl.TypeMultiChoice },
		"option label": func(r *hitl.CreateRequest) { r.Options[1].Label = "Navy" },
		"option key":   func(r *hitl.CreateRequest) { r.Options[1].Key = "navy" },
		"option order": func(r *hitl.CreateRequest) { r.Options[0], r.Options[1] = r.Options[1], r.Options[0] },
		"option added": func(r *hitl.CreateRequest) { r.Options = append(r.Options, hitl.Option{Key: "green"}) },
		"description":  func(r *hitl.CreateRequest) { r.Options[0].Description = "warm" },
		"default":      func(r *hitl.CreateRequest) { r.DefaultResponse = json.RawMessage(`"red"`) },
		"on_timeout": func(r *hitl.CreateRequest) {
			r.DefaultResponse, r.OnTimeout = json.RawMessage(`"red"`), hitl.OnTimeoutDefault
		},
		"free text type": func(r *hitl.CreateRequest) { r.Type, r.Options = hitl.TypeFreeText, nil },
		"escalation": func(r *hitl.CreateRequest) {
			r.Escalation = []hitl.EscalationStep{{After: "10m", Remind: true}}
		},
		"escalation step": func(r *hitl.CreateRequest) {
			r.Escalation = []hitl.EscalationStep{{After: "20m", Remind: true}}
		},
		"escalation adds targets": func(r *hitl.CreateRequest) {
			r.Escalation = []hitl.EscalationStep{{After: "10m", AddTargets: &hitl.Targets{Groups: []string{"ops"}}}}
		},
		// An empty list opts out of the server's default escalation, which
		// no escalation gets.
		"escalation opted out": func(r *hitl.CreateRequest) { r.Escalation = []hitl.EscalationStep{} },
	}
	seen := map[string]string{want: "base"}
	for name, change := range different {
		req := base()
		req.Options = append(hitl.OptionList(nil), req.Options...)
		change(&req)
		got := hash(req)
		if prev, ok := seen[got]; ok {
			t.Errorf("%s: got the same hash as %s", name, prev)
		}
		seen[got] = name
	}

	form := func(schema string) string {
		t.Helper()
		return hash(hitl.CreateRequest{Type: hitl.TypeForm, Question: "Details?", FormSchema: json.RawMessage(schema)})
	}
	a := form(`{"type":"object","properties":{"name":{"type":"string"}}}`)
	if b := form(" {\"type\": \"object\",\n \"properties\": {\"name\": {\"type\": \"string\"}}}"); a != b {
		t.Errorf("schema differing only in spacing: got hashes %s and %s, want equal", a, b)
	}
	if b := form(`{"type":"object","properties":{"name":{"type":"string","minLength":1}}}`); a == b {
		t.Errorf("different schemas: got equal hashes %s", a)
	}
}

func TestTargets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		targets *hitl.Targets
		want    *hitl.Targets
	}{
		{"nil", nil, nil},
		{"empty", &hitl.Targets{}, nil},
		{"empty lists", &hitl.Targets{Users: []string{}, Groups: []string{}}, nil},
		{"users", &hitl.Targets{Users: []string{"alice", " bob "}}, &hitl.Targets{Users: []string{"alice", "bob"}}},
		{"groups", &hitl.Targets{Groups: []string{"ops"}}, &hitl.Targets{Groups: []string{"ops"}}},
	}
	for _, tt := range tests {
		in := create(t, hitl.CreateRequest{Question: "q", Targets: tt.targets})
		if !reflect.DeepEqual(in.Targets, tt.want) {
			t.Errorf("%s: got Targets %+v, want %+v", tt.name, in.Targets, tt.want)
		}
	}
}

func TestCreateRequestJSON(t *testing.T) {
	t.Parallel()
	in := createJSON(t, `{
		"interaction_type": "multi_choice",
		"question": "Which regions?",
		"options": ["EU", "US", {"key": "ap", "label": "Asia-Pacific"}],
		"timeout": 120,
		"on_timeout": "default",
		"default_response": ["eu"],
		"idempotency_key": "deploy-42",
		"targets": {"users": ["alice"]}
	}`)
	if got, want := string(in.DefaultResponse), `["eu"]`; got != want {
		t.Errorf("DefaultResponse: got %s, want %s", got, want)
	}
	if got, want := in.Timeout, 120.0; got != want {
		t.Errorf("Timeout: got %v, want %v", got, want)
	}
	if got, want := in.OnTimeout, hitl.OnTimeoutDefault; got != want {
		t.Errorf("OnTimeout: got %q, want %q", got, want)
	}
	if got, want := in.IdempotencyKey, "deploy-42"; got != want {
		t.Errorf("IdempotencyKey: got %q, want %q", got, want)
	}
}

// TestSameRequestReadsOlderFingerprints: a fingerprint stored before the
// targets were covered still matches its retry (compared without them);
// a current one covers them.
func TestSameRequestReadsOlderFingerprints(t *testing.T) {
	in, err := hitl.NewInteraction(hitl.CreateRequest{Question: "Deploy?", Targets: &hitl.Targets{Users: []string{"alice"}}}, hitl.Caller{Name: "agent"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The fingerprint of this request as stored before targets were
	// covered (sha256 of its fields without them).
	untargeted, err := hitl.NewInteraction(hitl.CreateRequest{Question: "Deploy?"}, hitl.Caller{Name: "agent"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	legacy := strings.TrimPrefix(untargeted.RequestHash, "v2:")
	if legacy == untargeted.RequestHash {
		t.Fatalf("fingerprint %q is not versioned", untargeted.RequestHash)
	}
	if !in.SameRequest(in.RequestHash) || !in.SameRequest(legacy) {
		t.Errorf("a retry does not match its own fingerprint, or one stored before targets were covered")
	}
	if in.SameRequest(untargeted.RequestHash) {
		t.Errorf("a question for alice matches the same question for anyone")
	}
}
