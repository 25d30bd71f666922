package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
)

// apiError is the JSON shape of every error.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func TestCreateGetWaitRespond(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var in hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{
		"interaction_type": "single_choice",
		"question":         "Which environment?",
		"context":          "Release **1.4**",
		"options":          []any{"Staging", map[string]any{"key": "prod", "label": "Production", "description": "careful"}},
		"timeout":          120,
		"source_agent":     "deployer",
		"session_id":       "s-1",
		"metadata":         map[string]any{"ticket": "OPS-7"},
	}, http.StatusCreated, &in)
	if in.ID == "" || in.Status != hitl.StatusPending || in.Timeout != 120 || in.SourceAgent != "deployer" {
		t.Fatalf("created %+v", in)
	}
	if got, want := in.Options, []hitl.Option{{Key: "staging", Label: "Staging"}, {Key: "prod", Label: "Production", Description: "careful"}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("options %v, want %v", got, want)
	}
	if d := time.Until(in.Deadline); d < 100*time.Second || d > 121*time.Second {
		t.Errorf("deadline %s is %s away, want about 120s", in.Deadline, d)
	}

	// The raw JSON carries every DESIGN.md §1 field, deadline in RFC 3339 UTC.
	_, raw := ts.do(t, "GET", "/api/v1/interactions/"+in.ID, nil)
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"interaction_id", "interaction_type", "question", "context", "options", "timeout", "deadline", "on_timeout", "source_agent", "session_id", "metadata", "status", "created_at"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("GET response lacks %q: %s", f, raw)
		}
	}
	if d, _ := fields["deadline"].(string); !strings.HasSuffix(d, "Z") {
		t.Errorf("deadline %q is not UTC RFC 3339", d)
	}

	// Long-poll times out with the interaction still pending.
	var waited hitl.Interaction
	ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID+"/wait?timeout=0.05", nil, http.StatusOK, &waited)
	if waited.Status != hitl.StatusPending {
		t.Errorf("wait timed out with status %s, want pending", waited.Status)
	}

	// A waiter blocked on the long-poll returns the answer.
	done := make(chan hitl.Interaction, 1)
	go func() {
		var got hitl.Interaction
		ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID+"/wait?timeout=60", nil, http.StatusOK, &got)
		done <- got
	}()
	hitltest.Await(t, "the long-poll to wait", ts.Broker.WaitStarted(in.ID))
	var answered hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": "Production"}, http.StatusOK, &answered)
	got := <-done
	if got.Status != hitl.StatusAnswered || string(got.Result.Value) != `"prod"` || got.Result.Channel != "api" || got.Result.RespondedBy != "local" {
		t.Errorf("waiter got %s %+v, want answered \"prod\" by local via api", got.Status, got.Result)
	}
	if got.Result.RespondedAt.IsZero() {
		t.Error("responded_at is zero")
	}
}

func TestErrorStatuses(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var in hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"interaction_type": "approval", "question": "Ship?"}, http.StatusCreated, &in)
	var gone hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"question": "Later?"}, http.StatusCreated, &gone)
	ts.mustDo(t, "POST", "/api/v1/interactions/"+gone.ID+"/cancel", map[string]any{"reason": "plan changed"}, http.StatusOK, nil)
	var answered hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"question": "Name?"}, http.StatusCreated, &answered)
	ts.mustDo(t, "POST", "/api/v1/interactions/"+answered.ID+"/respond", map[string]any{"value": "Ada"}, http.StatusOK, nil)

	big := `{"question":"` + strings.Repeat("x", 1<<20) + `"}`
	cases := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"malformed JSON", "POST", "/api/v1/interactions", `{"question":`, 400, "invalid"},
		{"empty body", "POST", "/api/v1/interactions", "", 400, "invalid"},
		{"wrong field type", "POST", "/api/v1/interactions", `{"question": 5}`, 400, "invalid"},
		{"missing question", "POST", "/api/v1/interactions", map[string]any{"interaction_type": "free_text"}, 400, "invalid"},
		{"choice without options", "POST", "/api/v1/interactions", map[string]any{"interaction_type": "single_choice", "question": "?"}, 400, "invalid"},
		{"form without schema", "POST", "/api/v1/interactions", map[string]any{"interaction_type": "form", "question": "?"}, 400, "invalid"},
		{"unknown type", "POST", "/api/v1/interactions", map[string]any{"interaction_type": "poll", "question": "?"}, 400, "invalid"},
		{"body too large", "POST", "/api/v1/interactions", big, 413, "too_large"},
		{"unknown id", "GET", "/api/v1/interactions/nope", nil, 404, "not_found"},
		{"wait unknown id", "GET", "/api/v1/interactions/nope/wait?timeout=1", nil, 404, "not_found"},
		{"bad wait timeout", "GET", "/api/v1/interactions/" + in.ID + "/wait?timeout=soon", nil, 400, "invalid"},
		{"respond unknown id", "POST", "/api/v1/interactions/nope/respond", map[string]any{"value": true}, 404, "not_found"},
		{"invalid value", "POST", "/api/v1/interactions/" + in.ID + "/respond", map[string]any{"value": "perhaps"}, 422, "invalid_value"},
		{"missing value", "POST", "/api/v1/interactions/" + in.ID + "/respond", map[string]any{}, 400, "invalid"},
		{"null value", "POST", "/api/v1/interactions/" + in.ID + "/respond", map[string]any{"value": nil}, 400, "invalid"},
		{"NaN wait timeout", "GET", "/api/v1/interactions/" + in.ID + "/wait?timeout=NaN", nil, 400, "invalid"},
		{"Inf wait timeout", "GET", "/api/v1/interactions/" + in.ID + "/wait?timeout=Inf", nil, 400, "invalid"},
		{"-Inf wait timeout", "GET", "/api/v1/interactions/" + in.ID + "/wait?timeout=-Inf", nil, 400, "invalid"},
		{"array body", "POST", "/api/v1/interactions/" + in.ID + "/respond", `[true]`, 400, "invalid"},
		{"wrong method", "DELETE", "/api/v1/interactions/" + in.ID, nil, 405, "method_not_allowed"},
		{"bad channel", "POST", "/api/v1/interactions/" + in.ID + "/respond", map[string]any{"value": true, "channel": "slack"}, 400, "invalid"},
		{"already answered", "POST", "/api/v1/interactions/" + answered.ID + "/respond", map[string]any{"value": "Bob"}, 409, "conflict"},
		{"cancelled", "POST", "/api/v1/interactions/" + gone.ID + "/respond", map[string]any{"value": "x"}, 410, "cancelled"},
		{"cancel answered", "POST", "/api/v1/interactions/" + answered.ID + "/cancel", nil, 409, "conflict"},
		{"bad status filter", "GET", "/api/v1/interactions?status=done", nil, 400, "invalid"},
		{"bad limit", "GET", "/api/v1/interactions?limit=-1", nil, 400, "invalid"},
		{"bad cursor", "GET", "/api/v1/interactions?cursor=not-a-cursor", nil, 400, "invalid"},
		{"unknown route", "GET", "/api/v1/nothing", nil, 404, "not_found"},
		{"AI-Parrot missing id", "POST", "/api/v1/agents/hitl/respond", map[string]any{"value": true}, 400, "invalid"},
		{"AI-Parrot missing value", "POST", "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": in.ID}, 400, "invalid"},
		{"AI-Parrot null value", "POST", "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": in.ID, "value": nil}, 400, "invalid"},
		{"AI-Parrot wrong type", "POST", "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": in.ID, "value": true, "response_type": "free_text"}, 422, "invalid_value"},
		{"AI-Parrot unknown id", "POST", "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": "nope", "value": true}, 404, "not_found"},
		{"human_feedback missing id", "POST", "/api/human-feedback/submit", map[string]any{"response": "x"}, 400, "invalid"},
		{"human_feedback missing response", "POST", "/api/human-feedback/submit", map[string]any{"unique_id": in.ID}, 400, "invalid"},
		{"human_feedback null response", "POST", "/api/human-feedback/submit", map[string]any{"unique_id": in.ID, "response": nil}, 400, "invalid"},
		{"human_feedback unknown id", "POST", "/api/human-feedback/submit", map[string]any{"unique_id": "nope", "response": "x"}, 404, "not_found"},
		{"human_feedback answered", "POST", "/api/human-feedback/submit", map[string]any{"unique_id": answered.ID, "response": "x"}, 409, "conflict"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := ts.do(t, tc.method, tc.path, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d; body %.300s", status, tc.status, raw)
			}
			var e apiError
			if err := json.Unmarshal(raw, &e); err != nil || e.Error.Code != tc.code || e.Error.Message == "" {
				t.Errorf("body %.300s, want error code %q with a message", raw, tc.code)
			}
		})
	}
	// Nothing above was recorded: the approval is still pending.
	var still hitl.Interaction
	ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID, nil, http.StatusOK, &still)
	if still.Status != hitl.StatusPending {
		t.Errorf("after rejected answers the interaction is %s, want pending", still.Status)
	}
}

func TestExpiredAnswerIs410(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var in hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"question": "Quick?", "timeout": 0.05}, http.StatusCreated, &in)
	var done hitl.Interaction
	ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID+"/wait?timeout=30", nil, http.StatusOK, &done)
	if done.Status != hitl.StatusExpired {
		t.Fatalf("wait returned %s, want expired", done.Status)
	}
	status, raw := ts.do(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": "late"})
	var e apiError
	_ = json.Unmarshal(raw, &e)
	if status != http.StatusGone || e.Error.Code != "expired" {
		t.Errorf("late answer: %d %s, want 410 expired", status, raw)
	}
}

func TestIdempotentCreate(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	req := map[string]any{"question": "Enter the OTP", "idempotency_key": "otp_1701234567891"}
	var first, again hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", req, http.StatusCreated, &first)
	ts.mustDo(t, "POST", "/api/v1/interactions", req, http.StatusOK, &again)
	if again.ID != first.ID {
		t.Errorf("repeat returned %s, want %s", again.ID, first.ID)
	}
	req["question"] = "Something else"
	status, raw := ts.do(t, "POST", "/api/v1/interactions", req)
	if status != http.StatusConflict || !strings.Contains(string(raw), "feedback request already exists") {
		t.Errorf("same key, other question: %d %s, want 409 feedback request already exists", status, raw)
	}
}

func TestListPaging(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var ids []string
	for i := range 7 {
		var in hitl.Interaction
		ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"question": fmt.Sprintf("q%d", i)}, http.StatusCreated, &in)
		ids = append(ids, in.ID)
	}
	ts.mustDo(t, "POST", "/api/v1/interactions/"+ids[0]+"/respond", map[string]any{"value": "a"}, http.StatusOK, nil)

	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("too many pages")
		}
		var page struct {
			Interactions []hitl.Interaction `json:"interactions"`
			NextCursor   *string            `json:"next_cursor"`
		}
		ts.mustDo(t, "GET", "/api/v1/interactions?status=pending&limit=2&cursor="+cursor, nil, http.StatusOK, &page)
		for _, in := range page.Interactions {
			got = append(got, in.ID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	want := []string{ids[6], ids[5], ids[4], ids[3], ids[2], ids[1]}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pending newest first = %v, want %v", got, want)
	}
	var answered struct {
		Interactions []hitl.Interaction `json:"interactions"`
		NextCursor   *string            `json:"next_cursor"`
	}
	ts.mustDo(t, "GET", "/api/v1/interactions?status=answered", nil, http.StatusOK, &answered)
	if len(answered.Interactions) != 1 || answered.Interactions[0].ID != ids[0] || answered.NextCursor != nil {
		t.Errorf("answered list = %+v, want just %s", answered, ids[0])
	}
}

func TestFirstSeedContract(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var in hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{
		"question": "Enter the 6-digit verification code sent to your email", "idempotency_key": "otp_1701234567891",
		"context": "login to the console", "source_agent": "browser-agent",
	}, http.StatusCreated, &in)

	var pending struct {
		Requests []map[string]any `json:"requests"`
	}
	ts.mustDo(t, "GET", "/api/human-feedback/pending", nil, http.StatusOK, &pending)
	if len(pending.Requests) != 1 {
		t.Fatalf("pending = %+v, want one request", pending)
	}
	r := pending.Requests[0]
	want := map[string]any{
		"unique_id": "otp_1701234567891", "message_for_user": in.Question, "context": "login to the console",
		"interaction_id": in.ID, "interaction_type": "free_text",
	}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("pending[%q] = %v, want %v", k, r[k], v)
		}
	}
	for _, k := range []string{"options", "created_at", "expires_at"} {
		if _, ok := r[k]; !ok {
			t.Errorf("pending request lacks %q", k)
		}
	}

	var resp map[string]any
	ts.mustDo(t, "POST", "/api/human-feedback/submit", map[string]any{"unique_id": "otp_1701234567891", "response": "582491"}, http.StatusOK, &resp)
	if resp["unique_id"] != "otp_1701234567891" || resp["status"] != "success" || resp["message"] == "" || resp["success"] != true {
		t.Errorf("submit response %v, want unique_id, status success, message", resp)
	}
	var got hitl.Interaction
	ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID, nil, http.StatusOK, &got)
	if got.Status != hitl.StatusAnswered || string(got.Result.Value) != `"582491"` || got.Result.Channel != "web" {
		t.Errorf("after submit: %s %+v, want answered \"582491\" via web", got.Status, got.Result)
	}
	ts.mustDo(t, "GET", "/api/human-feedback/pending", nil, http.StatusOK, &pending)
	if len(pending.Requests) != 0 {
		t.Errorf("pending after submit = %v, want none", pending.Requests)
	}

	// unique_id may also be the interaction id.
	var other hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"interaction_type": "approval", "question": "Proceed?"}, http.StatusCreated, &other)
	ts.mustDo(t, "POST", "/api/human-feedback/submit", map[string]any{"unique_id": other.ID, "response": "Approve"}, http.StatusOK, nil)
	ts.mustDo(t, "GET", "/api/v1/interactions/"+other.ID, nil, http.StatusOK, &got)
	if string(got.Result.Value) != "true" {
		t.Errorf("approval answered with label Approve recorded %s, want true", got.Result.Value)
	}
}

func TestSecondSeedRespond(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	cases := []struct {
		create map[string]any
		value  any
		want   string
	}{
		{map[string]any{"interaction_type": "approval", "question": "OK?"}, false, "false"},
		{map[string]any{"interaction_type": "single_choice", "question": "Pick", "options": []string{"Red", "Blue"}}, "blue", `"blue"`},
		{map[string]any{"interaction_type": "multi_choice", "question": "Pick", "options": []string{"Red", "Blue", "Green"}}, []string{"green", "Red"}, `["green","red"]`},
		{map[string]any{"interaction_type": "form", "question": "Fill", "form_schema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []string{"n"}}}, map[string]any{"n": 3}, `{"n":3}`},
		{map[string]any{"interaction_type": "free_text", "question": "Say"}, "hello", `"hello"`},
	}
	for _, tc := range cases {
		var in hitl.Interaction
		ts.mustDo(t, "POST", "/api/v1/interactions", tc.create, http.StatusCreated, &in)
		var resp map[string]any
		ts.mustDo(t, "POST", "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": in.ID, "value": tc.value, "response_type": in.Type}, http.StatusOK, &resp)
		if resp["ok"] != true || resp["interaction_id"] != in.ID || len(resp) != 2 {
			t.Errorf("%s: response %v, want {ok: true, interaction_id}", in.Type, resp)
		}
		var got hitl.Interaction
		ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID, nil, http.StatusOK, &got)
		if string(got.Result.Value) != tc.want || got.Result.Channel != "web" {
			t.Errorf("%s: recorded %s via %s, want %s via web", in.Type, got.Result.Value, got.Result.Channel, tc.want)
		}
	}
	// A form value that fails the schema is refused with the reason.
	var form hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", cases[3].create, http.StatusCreated, &form)
	status, raw := ts.do(t, "POST", "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": form.ID, "value": map[string]any{"n": "three"}})
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(raw), "/n") {
		t.Errorf("invalid form: %d %s, want 422 naming /n", status, raw)
	}
}

func TestFiftyConcurrentAnswersOverHTTP(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var in hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"interaction_type": "approval", "question": "Merge?"}, http.StatusCreated, &in)
	const n = 50
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/api/v1/interactions/" + in.ID + "/respond"
			body := map[string]any{"value": i%2 == 0}
			if i%3 == 0 {
				path, body = "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": in.ID, "value": i%2 == 0}
			}
			status, raw := ts.do(t, "POST", path, body)
			// The AI-Parrot HITL contract's route says 404 where the
			// native one says 409; the code is conflict on both.
			if status == http.StatusNotFound && i%3 == 0 && strings.Contains(string(raw), `"code":"conflict"`) {
				status = http.StatusConflict
			}
			statuses <- status
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[http.StatusOK] != 1 || count[http.StatusConflict] != n-1 {
		t.Errorf("statuses %v, want one 200 and %d conflicts (409, or 404 with code conflict on the contract's route)", count, n-1)
	}
}

func TestRestartLosesNothing(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var pending, overdue hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"interaction_type": "approval", "question": "Keep me?", "timeout": 3600}, http.StatusCreated, &pending)
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"question": "Expire while down", "timeout": 0.3}, http.StatusCreated, &overdue)

	// A waiter is blocked when the server stops: it gets the pending state.
	var waited hitl.Interaction
	done := make(chan struct{})
	go func() {
		defer close(done)
		ts.mustDo(t, "GET", "/api/v1/interactions/"+pending.ID+"/wait?timeout=60", nil, http.StatusOK, &waited)
	}()
	hitltest.Await(t, "the long-poll to wait", ts.Broker.WaitStarted(pending.ID))
	ts.Broker.Close()
	<-done
	if waited.Status != hitl.StatusPending {
		t.Errorf("waiter released at shutdown with %s, want pending", waited.Status)
	}
	ts.Stop()
	// Let the short deadline pass while the server is down: wait until the
	// wall clock is past it (bounded; no fixed sleep).
	for time.Now().Before(overdue.Deadline.Add(10 * time.Millisecond)) {
		time.Sleep(10 * time.Millisecond)
	}

	ts2 := startTestServer(t, ts.Path)
	var got hitl.Interaction
	ts2.mustDo(t, "GET", "/api/v1/interactions/"+overdue.ID, nil, http.StatusOK, &got)
	if got.Status != hitl.StatusExpired {
		t.Errorf("overdue interaction after restart: %s, want expired", got.Status)
	}
	ts2.mustDo(t, "GET", "/api/v1/interactions/"+pending.ID, nil, http.StatusOK, &got)
	if got.Status != hitl.StatusPending {
		t.Fatalf("pending interaction after restart: %s, want pending", got.Status)
	}
	// The agent reconnects and waits; the person answers on the new server.
	result := make(chan hitl.Interaction, 1)
	go func() {
		var w hitl.Interaction
		ts2.mustDo(t, "GET", "/api/v1/interactions/"+pending.ID+"/wait?timeout=60", nil, http.StatusOK, &w)
		result <- w
	}()
	ts2.mustDo(t, "POST", "/api/v1/interactions/"+pending.ID+"/respond", map[string]any{"value": "approve"}, http.StatusOK, nil)
	if w := <-result; w.Status != hitl.StatusAnswered || string(w.Result.Value) != "true" {
		t.Errorf("reconnected waiter got %s %+v, want answered true", w.Status, w.Result)
	}
}

func TestHealthReadyMetrics(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	ts.mustDo(t, "GET", "/healthz", nil, http.StatusOK, nil)
	ts.mustDo(t, "GET", "/readyz", nil, http.StatusOK, nil)
	var in hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"interaction_type": "approval", "question": "?"}, http.StatusCreated, &in)
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"question": "still open"}, http.StatusCreated, nil)
	ts.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": true}, http.StatusOK, nil)
	_, raw := ts.do(t, "GET", "/metrics", nil)
	for _, want := range []string{
		`hitl_interactions_created_total{channel="api",type="approval"} 1`,
		`hitl_interactions_answered_total{channel="api",type="approval"} 1`,
		`hitl_interactions_pending 1`,
		`hitl_answer_latency_seconds_count{channel="api",type="approval"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	ts.Store.Close()
	status, _ := ts.do(t, "GET", "/readyz", nil)
	if status != http.StatusServiceUnavailable {
		t.Errorf("readyz with the store closed: %d, want 503", status)
	}
}

func TestCrossOriginPostRefused(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var in hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"interaction_type": "approval", "question": "Wire money?"}, http.StatusCreated, &in)
	for _, path := range []string{"/api/v1/interactions/" + in.ID + "/respond", "/api/v1/agents/hitl/respond", "/api/human-feedback/submit"} {
		body := fmt.Sprintf(`{"interaction_id":%q,"unique_id":%q,"value":true,"response":"yes"}`, in.ID, in.ID)
		req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "text/plain") // a "simple" request: no preflight
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-origin POST %s: status %d, want 403", path, resp.StatusCode)
		}
	}
	var got hitl.Interaction
	ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID, nil, http.StatusOK, &got)
	if got.Status != hitl.StatusPending {
		t.Errorf("after cross-origin POSTs the interaction is %s, want pending", got.Status)
	}
	// curl -d sends a form content type: accepted.
	req, _ := http.NewRequest("POST", ts.URL+"/api/v1/interactions/"+in.ID+"/respond", strings.NewReader(`{"value":"approve"}`))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("curl-style POST: status %d, want 200", resp.StatusCode)
	}
}
