package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// everyField returns an interaction with every field set, built by hand so
// that nothing is left at its zero value.
func everyField() *hitl.Interaction {
	return &hitl.Interaction{
		ID:       "0190a5c0-7d2e-7cc1-9b1e-4d6f4e8a1b2c",
		Type:     hitl.TypeSingleChoice,
		Question: "Which region? — «ünïcödé» ✓",
		Context:  "## Why\n\nThe *old* cluster is `full`.\n'quotes' \"too\" and a tab\t",
		Options: []hitl.Option{
			{Key: "eu", Label: "Europe", Description: "Frankfurt"},
			{Key: "us", Label: "United States"},
			{Key: "ap", Label: "Asia Pacific", Description: "Tokyo, Singapore"},
		},
		FormSchema:      raw(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
		DefaultResponse: raw(`"eu"`),
		Timeout:         3600.123,
		Deadline:        base.Add(time.Hour + 123*time.Millisecond),
		OnTimeout:       hitl.OnTimeoutDefault,
		IdempotencyKey:  "deploy-42",
		SourceAgent:     "deploy-bot",
		SessionID:       "session-7",
		Metadata: map[string]any{
			"ticket": "OPS-1",
			"n":      3.5,
			"ok":     true,
			"none":   nil,
			"list":   []any{"a", 1.0, false},
			"nested": map[string]any{"deep": map[string]any{"x": "y"}},
		},
		Targets:     &hitl.Targets{Users: []string{"alice", "bob"}, Groups: []string{"ops"}},
		CreatedBy:   "agent-1",
		CreatedVia:  hitl.ChannelMCP,
		CreatedAt:   base,
		Status:      hitl.StatusPending,
		RequestHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	}
}

// minimal returns an interaction with only the required fields: nil
// slices, maps and JSON, and no deadline.
func minimal() *hitl.Interaction {
	return &hitl.Interaction{
		Type:      hitl.TypeFreeText,
		Question:  "?",
		CreatedAt: base,
		Status:    hitl.StatusPending,
	}
}

// checkCreate creates in (built twice by build, so the store cannot alias
// what it compares against) and checks what Create, Interaction and the
// created event return.
func checkCreate(t *testing.T, s hitl.Store, build func() *hitl.Interaction) {
	t.Helper()
	got, ev, existed, err := s.CreateInteraction(t.Context(), build())
	if err != nil {
		t.Fatalf("CreateInteraction: %v", err)
	}
	if existed {
		t.Fatalf("CreateInteraction: got existed true for a new interaction")
	}
	want := build()
	if want.ID == "" {
		want.ID = got.ID
	}
	returnedAndStored(t, s, "CreateInteraction", want, got)
	if ev == nil {
		t.Fatalf("CreateInteraction: got no event")
	}
	wantEv := &hitl.Event{
		Seq:           ev.Seq,
		Type:          hitl.EventCreated,
		InteractionID: want.ID,
		At:            want.CreatedAt,
		Actor:         want.CreatedBy,
		Channel:       want.CreatedVia,
		Interaction:   want,
	}
	if d := cmp.Diff(wantEv, ev); d != "" {
		t.Errorf("created event (-want +got):\n%s", d)
	}
	if ev.Seq <= 0 {
		t.Errorf("created event Seq: got %d, want > 0", ev.Seq)
	}
}

func testCreateRoundTrip(t *testing.T, s hitl.Store) {
	t.Run("EveryField", func(t *testing.T) { checkCreate(t, s, everyField) })
	t.Run("Minimal", func(t *testing.T) { checkCreate(t, s, minimal) })
	t.Run("EmptyNotNil", func(t *testing.T) {
		checkCreate(t, s, func() *hitl.Interaction {
			in := minimal()
			in.Options = []hitl.Option{}
			in.Metadata = map[string]any{}
			in.Targets = &hitl.Targets{}
			in.FormSchema = raw(`{}`)
			return in
		})
	})
}

func testCreateRoundTripEveryType(t *testing.T, s hitl.Store) {
	reqs := map[hitl.Type]hitl.CreateRequest{
		hitl.TypeApproval: {Type: hitl.TypeApproval, Question: "Ship it?", OnTimeout: hitl.OnTimeoutDefault, DefaultResponse: raw(`"no"`)},
		hitl.TypeSingleChoice: {Type: hitl.TypeSingleChoice, Question: "Which?", Options: hitl.OptionList{
			{Key: "a", Label: "Alpha"}, {Label: "Beta Two"}}, IdempotencyKey: "k1"},
		hitl.TypeMultiChoice: {Type: hitl.TypeMultiChoice, Question: "Which ones?", Options: hitl.OptionList{
			{Key: "x", Label: "X", Description: "the x"}, {Key: "y", Label: "Y"}}, DefaultResponse: raw(`["y"]`)},
		hitl.TypeForm: {Type: hitl.TypeForm, Question: "Fill in", FormSchema: raw(`{
			"type": "object",
			"properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
			"required": ["name"]
		}`), DefaultResponse: raw(`{"name": "n/a"}`), Metadata: map[string]any{"k": "v"}},
		hitl.TypeAction: {Type: hitl.TypeAction, Action: &hitl.Action{Name: "Bash", Args: raw(`{"command":"ls"}`)},
			Decisions: []hitl.Decision{hitl.DecisionReject, hitl.DecisionEdit}, DefaultResponse: raw(`"deny"`)},
		hitl.TypeFreeText: {Question: "Why?", Context: "context *here*", Timeout: 90.5,
			SourceAgent: "a", SessionID: "s", Targets: &hitl.Targets{Groups: []string{"g"}}},
	}
	for typ, req := range reqs {
		t.Run(string(typ), func(t *testing.T) {
			checkCreate(t, s, func() *hitl.Interaction {
				in := ask(t, req, "agent-"+string(typ), base)
				if in.Type != typ {
					t.Fatalf("fixture: got type %s, want %s", in.Type, typ)
				}
				return in
			})
		})
	}
}

func testCreateMintsID(t *testing.T, s hitl.Store) {
	seen := map[string]bool{}
	for i := range 10 {
		in := askAt(t, at(i), 60)
		in.ID = ""
		got := create(t, s, in)
		if got.ID == "" || seen[got.ID] {
			t.Fatalf("create %d: got ID %q, want a new non-empty ID", i, got.ID)
		}
		seen[got.ID] = true
	}
	in := askAt(t, base, 60)
	in.ID = "chosen-by-caller"
	if got := create(t, s, in); got.ID != in.ID {
		t.Errorf("got ID %q, want the caller's %q", got.ID, in.ID)
	}
}

// testCreateTimePrecision checks that times keep at least millisecond
// precision, and that Create returns exactly what a later read returns
// even when the input has finer precision than the store keeps.
func testCreateTimePrecision(t *testing.T, s hitl.Store) {
	in := askAt(t, base, 60)
	in.CreatedAt = base.Add(123_456 * time.Nanosecond)
	in.Deadline = base.Add(time.Minute + 999*time.Millisecond)
	got := create(t, s, in)
	if !got.Deadline.Equal(in.Deadline) {
		t.Errorf("deadline: got %v, want %v", got.Deadline, in.Deadline)
	}
	if d := got.CreatedAt.Sub(in.CreatedAt).Abs(); d >= time.Millisecond {
		t.Errorf("created_at: got %v, want within 1ms of %v", got.CreatedAt, in.CreatedAt)
	}
	if d := cmp.Diff(got, get(t, s, got.ID)); d != "" {
		t.Errorf("Interaction differs from what Create returned (-create +get):\n%s", d)
	}
}

func testCreateDuplicateID(t *testing.T, s hitl.Store) {
	first := create(t, s, askAt(t, base, 60))
	seq := lastSeq(t, s)
	again := askAt(t, at(1), 60)
	again.ID = first.ID
	if _, _, _, err := s.CreateInteraction(t.Context(), again); err == nil {
		t.Fatalf("CreateInteraction with an existing ID: got no error")
	}
	if d := cmp.Diff(first, get(t, s, first.ID)); d != "" {
		t.Errorf("interaction changed by a failed create (-want +got):\n%s", d)
	}
	if got := lastSeq(t, s); got != seq {
		t.Errorf("LastEventSeq after failed create: got %d, want %d", got, seq)
	}
}

func testCreateAppendsEvent(t *testing.T, s hitl.Store) {
	got, ev, _, err := s.CreateInteraction(t.Context(), askAt(t, base, 60))
	if err != nil {
		t.Fatal(err)
	}
	if seq := lastSeq(t, s); seq != ev.Seq {
		t.Errorf("LastEventSeq: got %d, want the created event's %d", seq, ev.Seq)
	}
	evs := events(t, s)
	if d := cmp.Diff([]*hitl.Event{ev}, evs); d != "" {
		t.Errorf("Events (-want +got):\n%s", d)
	}
	if len(evs) == 1 && evs[0].Interaction.ID != got.ID {
		t.Errorf("event interaction: got %s, want %s", evs[0].Interaction.ID, got.ID)
	}
}

func testIdempotency(t *testing.T, s hitl.Store) {
	keyed := func(agent, key, question string, now time.Time) *hitl.Interaction {
		return ask(t, hitl.CreateRequest{Question: question, IdempotencyKey: key}, agent, now)
	}
	first := create(t, s, keyed("agent-a", "k", "Deploy?", base))
	seq := lastSeq(t, s)

	t.Run("SameKeySameCreator", func(t *testing.T) {
		// Even a different question: the caller decides, by RequestHash.
		for _, q := range []string{"Deploy?", "Something else?"} {
			got, ev, existed, err := s.CreateInteraction(t.Context(), keyed("agent-a", "k", q, at(5)))
			if err != nil {
				t.Fatalf("CreateInteraction: %v", err)
			}
			if !existed || ev != nil {
				t.Errorf("got existed %v, event %v; want existed true and no event", existed, ev)
			}
			if d := cmp.Diff(first, got); d != "" {
				t.Errorf("existing interaction (-want +got):\n%s", d)
			}
		}
		if got := lastSeq(t, s); got != seq {
			t.Errorf("LastEventSeq: got %d, want %d (nothing written)", got, seq)
		}
	})
	t.Run("SameKeyAndID", func(t *testing.T) {
		// A retry that names the question's id too is a repeat, not a
		// conflict over the id.
		again := keyed("agent-a", "k", "Deploy?", at(5))
		again.ID = first.ID
		got, ev, existed, err := s.CreateInteraction(t.Context(), again)
		if err != nil || !existed || ev != nil {
			t.Fatalf("got existed %v, event %v, error %v; want the existing interaction", existed, ev, err)
		}
		if d := cmp.Diff(first, got); d != "" {
			t.Errorf("existing interaction (-want +got):\n%s", d)
		}
	})
	t.Run("TakenIDOtherKey", func(t *testing.T) {
		other := keyed("agent-a", "k-other", "Deploy?", at(5))
		other.ID = first.ID
		if _, _, _, err := s.CreateInteraction(t.Context(), other); hitl.ErrorCode(err) != hitl.ECONFLICT {
			t.Errorf("a taken id with another key: error %v; want ECONFLICT", err)
		}
		if got := lastSeq(t, s); got != seq {
			t.Errorf("LastEventSeq: got %d, want %d (nothing written)", got, seq)
		}
	})
	t.Run("SameKeyOtherCreator", func(t *testing.T) {
		got := create(t, s, keyed("agent-b", "k", "Deploy?", at(6)))
		if got.ID == first.ID {
			t.Errorf("got the other creator's interaction %s", got.ID)
		}
	})
	t.Run("NoKey", func(t *testing.T) {
		a := create(t, s, keyed("agent-a", "", "Deploy?", at(7)))
		b := create(t, s, keyed("agent-a", "", "Deploy?", at(8)))
		if a.ID == b.ID {
			t.Errorf("two creates without a key got one ID %s", a.ID)
		}
	})
	t.Run("AfterResolve", func(t *testing.T) {
		done, _ := resolve(t, s, first.ID, cancel(at(9)))
		got, _, existed, err := s.CreateInteraction(t.Context(), keyed("agent-a", "k", "Deploy?", at(10)))
		if err != nil || !existed {
			t.Fatalf("got existed %v, error %v; want the resolved interaction", existed, err)
		}
		if d := cmp.Diff(done, got); d != "" {
			t.Errorf("existing interaction (-want +got):\n%s", d)
		}
	})
}

func testIdempotencyConcurrent(t *testing.T, s hitl.Store) {
	const n = 20
	type result struct {
		in      *hitl.Interaction
		existed bool
		err     error
	}
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		in := ask(t, hitl.CreateRequest{IdempotencyKey: "once"}, "agent", base)
		wg.Go(func() {
			<-start
			got, _, existed, err := s.CreateInteraction(t.Context(), in)
			results[i] = result{got, existed, err}
		})
	}
	close(start)
	wg.Wait()

	created := 0
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("create %d: %v", i, r.err)
		}
		if !r.existed {
			created++
		}
		if r.in.ID != results[0].in.ID {
			t.Errorf("create %d: got ID %s, want %s", i, r.in.ID, results[0].in.ID)
		}
	}
	if created != 1 {
		t.Errorf("got %d creates with existed false, want 1", created)
	}
	list, _, err := s.ListInteractions(t.Context(), hitl.ListFilter{IdempotencyKey: "once"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Errorf("got %d interactions with the key, want 1", len(list))
	}
	if evs := events(t, s); len(evs) != 1 {
		t.Errorf("got %d events, want 1 created event", len(evs))
	}
}

func testInteractionNotFound(t *testing.T, s hitl.Store) {
	create(t, s, askAt(t, base, 60))
	_, err := s.Interaction(t.Context(), "no-such-id")
	wantCode(t, "Interaction(unknown)", err, hitl.ENOTFOUND)
	wantErr(t, "Interaction(unknown)", err, hitl.ErrNotFound)
}
