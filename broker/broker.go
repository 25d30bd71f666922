// Package broker is the engine: it creates interactions, validates and
// records answers exactly once, wakes waiting agents, expires deadlines and
// fans events out to live streams, over any hitl.Store.
package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/risk"
)

// ErrClosed is returned by waits and streams when the broker shuts down.
var ErrClosed = hitl.Errorf(hitl.EUNAVAILABLE, "server is shutting down")

// Options configure a Broker. The zero value is usable.
type Options struct {
	// Logger receives operational logs; nil discards them. Answer values
	// are never logged.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SubscriberBuffer is how many events a slow subscriber may lag behind
	// before it is dropped; 0 means 256.
	SubscriberBuffer int
	// Retention is how long ended interactions (answered, expired,
	// cancelled) are kept, from when they ended: from Start on, older ones
	// are purged with their events and other rows every PurgeInterval (see
	// Purge). 0 keeps everything.
	Retention time.Duration
	// PurgeInterval is how often to purge with a Retention; 0 means
	// DefaultPurgeInterval.
	PurgeInterval time.Duration
	// ClaimTTL is how long a claim holds when the claimer names no
	// time; 0 means hitl.DefaultClaimTTL.
	ClaimTTL time.Duration
	// RecountInterval is how often the votes on pending interactions are
	// counted again against who may vote now; 0 means
	// DefaultRecountInterval.
	RecountInterval time.Duration
	// DefaultEscalation is the escalation of questions whose request
	// names none (steps due after a question's deadline are left out of
	// it); nil means none.
	DefaultEscalation []hitl.EscalationStep
	// Risk marks risky actions when they are created; nil means the
	// built-in checks alone (risk.New(nil)).
	Risk *risk.Assessor
	// Receipts signs the receipt of every approved action it returns
	// (result.receipt); nil issues none.
	Receipts hitl.ReceiptIssuer
}

// Broker is the interaction engine. Create it with New, then Start it.
type Broker struct {
	store hitl.Store
	log   *slog.Logger
	now   func() time.Time

	waiters waiters
	recent  *recent
	feed    *feed
	expiry  *expiry
	// pending keeps the counts of pending questions (pendingcounts.go).
	pending pendingCounts
	// rules keeps the rules in force, indexed (rulecache.go).
	rules ruleCache
	// escalator fires escalation steps (escalation.go), and
	// defaultEscalation is the steps of questions that name none.
	escalator         *escalator
	defaultEscalation []hitl.EscalationStep
	// risk marks risky actions.
	risk *risk.Assessor
	// receipts signs approved actions' receipts (receipt.go).
	receipts hitl.ReceiptIssuer

	retention  time.Duration
	purgeEvery time.Duration
	claimTTL   time.Duration
	// recountEvery is how often votes are counted again (recount.go).
	recountEvery time.Duration

	closeOnce sync.Once
	closed    chan struct{}
	stop      context.CancelFunc // ends the store listener and the purges
	wg        sync.WaitGroup
}

var _ hitl.Service = (*Broker)(nil)

// New returns a broker over store. Call Start before use.
func New(store hitl.Store, opts *Options) *Broker {
	if opts == nil {
		opts = &Options{}
	}
	b := &Broker{
		store:  store,
		log:    opts.Logger,
		now:    opts.Now,
		closed: make(chan struct{}),
	}
	if b.log == nil {
		b.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if b.now == nil {
		b.now = time.Now
	}
	b.retention, b.purgeEvery = opts.Retention, opts.PurgeInterval
	b.claimTTL = opts.ClaimTTL
	if b.claimTTL <= 0 {
		b.claimTTL = hitl.DefaultClaimTTL
	}
	b.recountEvery = opts.RecountInterval
	if b.recountEvery <= 0 {
		b.recountEvery = DefaultRecountInterval
	}
	if b.purgeEvery <= 0 {
		b.purgeEvery = DefaultPurgeInterval
	}
	b.waiters.m = make(map[string]*waitEntry)
	b.recent = newRecent(recentBytes, recentEntryBytes)
	bufSize := opts.SubscriberBuffer
	if bufSize <= 0 {
		bufSize = 256
	}
	b.feed = newFeed(store, b.log, bufSize, b.closed, b.delivered)
	b.expiry = newExpiry(b)
	b.escalator = newEscalator(b)
	b.defaultEscalation = opts.DefaultEscalation
	b.risk = opts.Risk
	if b.risk == nil {
		b.risk = risk.New(nil)
	}
	b.receipts = opts.Receipts
	return b
}

// Start loads the event sequence, expires what passed its deadline while
// the server was down, and starts the deadline timer, and with a
// Retention the purges. When the store is shared with other processes (a
// hitl.EventListener), it also starts following their events: they reach
// this broker's subscribers, wake its waiters and arm its deadline timer.
func (b *Broker) Start(ctx context.Context) error {
	seq, err := b.store.LastEventSeq(ctx)
	if err != nil {
		return fmt.Errorf("start broker: %w", err)
	}
	l, shared := b.store.(hitl.EventListener)
	b.feed.start(seq, shared)
	lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	b.stop = stop
	if shared {
		b.wg.Add(2)
		go func() {
			defer b.wg.Done()
			if err := l.ListenEvents(lctx, seq, b.feed.advance); err != nil {
				b.log.Error("listen for events from other processes", "error", err)
			}
		}()
		go func() {
			defer b.wg.Done()
			b.feed.follow(lctx)
		}()
	}
	b.pending.start(lctx, b)
	if err := b.expiry.expireDue(ctx); err != nil {
		b.Close()
		return fmt.Errorf("start broker: expire overdue interactions: %w", err)
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.expiry.run()
	}()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.recountLoop(lctx)
	}()
	if b.escalator.store != nil {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.escalator.run(lctx)
		}()
	}
	if b.retention > 0 {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.retain(lctx)
		}()
	}
	return nil
}

// Close stops the deadline timer, releases every waiter and closes every
// subscription. Create, Respond and Cancel keep working until the store is
// closed, so in-flight requests can finish.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() {
		close(b.closed)
		b.waiters.release()
		b.feed.closeAll(ErrClosed)
		if b.stop != nil {
			b.stop()
		}
	})
	b.wg.Wait()
	return nil
}

// Observe registers fn to be called for every event, in sequence order,
// from now on (for metrics, audit sinks and stream hubs); with a shared
// store, that is every replica's events. fn must not block. Observe
// returns the sequence number of the newest event before fn's first.
func (b *Broker) Observe(fn func(*hitl.Event)) int64 {
	b.feed.mu.Lock()
	defer b.feed.mu.Unlock()
	b.feed.observers = append(b.feed.observers, fn)
	return b.feed.last
}

// Delivered returns the sequence number of the newest event delivered to
// subscribers and observers. Events are delivered in order and without
// gaps, so every event up to it is committed, on a shared store too.
func (b *Broker) Delivered() int64 {
	b.feed.mu.Lock()
	defer b.feed.mu.Unlock()
	return b.feed.last
}

// Now returns the time on the broker's clock.
func (b *Broker) Now() time.Time { return b.now() }

// Done returns a channel that is closed when the broker closes.
func (b *Broker) Done() <-chan struct{} { return b.closed }

// Create validates req and records a new pending interaction for the caller
// in ctx. An idempotent repeat (same key, same question) returns the
// existing interaction with created false; the same key with a different
// question is a conflict. An action that a rule decides is created
// answered, by the rule (see ruleAnswer).
func (b *Broker) Create(ctx context.Context, req hitl.CreateRequest) (*hitl.Interaction, bool, error) {
	in, created, err := b.create(ctx, req)
	return b.receipted(in), created, err
}

// create is Create without the receipt.
func (b *Broker) create(ctx context.Context, req hitl.CreateRequest) (*hitl.Interaction, bool, error) {
	caller := hitl.CallerFrom(ctx)
	if err := hitl.CanCreate(caller); err != nil {
		return nil, false, err
	}
	onBehalfOf, err := b.resolveOnBehalfOf(ctx, req.OnBehalfOf)
	if err != nil {
		return nil, false, err
	}
	req.OnBehalfOf = onBehalfOf
	in, err := hitl.NewInteraction(req, caller, b.now())
	if err != nil {
		return nil, false, err
	}
	in.DefaultEscalation(req, b.defaultEscalation)
	b.risk.Mark(in)
	version, err := b.decide(ctx, in, false)
	if err != nil {
		return nil, false, err
	}
	unreachable, err := b.openCount(ctx, in)
	if err != nil {
		return nil, false, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, false, fmt.Errorf("create interaction: mint id: %w", err)
	}
	in.ID = id.String()
	got, ev, existed, err := b.createDecided(ctx, in, version)
	if err != nil {
		return nil, false, fmt.Errorf("create interaction: %w", err)
	}
	if existed {
		if !in.SameRequest(got.RequestHash) {
			return nil, false, hitl.Errorf(hitl.ECONFLICT, "feedback request already exists: idempotency_key %q was used for a different question, or for other people (interaction %s)", in.IdempotencyKey, got.ID)
		}
		return got, false, nil
	}
	b.recent.put(ev)
	b.feed.publish(ev)
	if ev.Next != nil { // answered by a rule: one line for both
		b.resolved(ev.Next)
		b.log.Info("interaction created and answered by rule", "interaction_id", got.ID, "type", string(got.Type), "source_agent", got.SourceAgent,
			"by", caller.Name, "channel", caller.Channel, "rule_id", got.Result.RuleID)
		return got, true, nil
	}
	b.log.Info("interaction created", "interaction_id", got.ID, "type", string(got.Type), "source_agent", got.SourceAgent, "by", caller.Name, "channel", caller.Channel)
	b.expiry.scheduled(got.Deadline)
	b.escalator.created(ctx, got)
	if unreachable != nil {
		return b.endUnreachable(ctx, got, *unreachable)
	}
	return got, true, nil
}

// Get returns one interaction, if the caller may see it.
func (b *Broker) Get(ctx context.Context, id string) (*hitl.Interaction, error) {
	in, err := b.visible(ctx, id)
	return b.receipted(in), err
}

// List returns a page of the interactions the caller may see, in f's
// order (newest first by default).
func (b *Broker) List(ctx context.Context, f hitl.ListFilter) ([]*hitl.Interaction, string, error) {
	ins, next, err := b.list(ctx, f)
	return b.receiptedAll(ins), next, err
}

// list is List without the receipts.
func (b *Broker) list(ctx context.Context, f hitl.ListFilter) ([]*hitl.Interaction, string, error) {
	if err := hitl.CheckListFilter(f); err != nil {
		return nil, "", err
	}
	f, ok := hitl.Restrict(hitl.CallerFrom(ctx), f)
	if !ok {
		return nil, "", nil
	}
	return b.store.ListInteractions(ctx, f)
}

// Respond records the caller's answer to a pending interaction after
// validating and normalising it. Exactly one answer wins: a later one gets a
// conflict (answered), or a gone error (expired, cancelled). Agents are
// refused (403); to a responder the interaction does not target, it is
// not found (404), as it is to Get.
func (b *Broker) Respond(ctx context.Context, id string, value json.RawMessage) (*hitl.Interaction, error) {
	return b.RespondIdempotent(ctx, id, value, "")
}

// RespondIdempotent is Respond with the idempotency key the answer was
// sent with (the Idempotency-Key header; "" for none, see
// hitl.CheckAnswerKey), which is stored with the answer. When the same
// caller sends the same answer with the same key again — its reply was
// lost — it gets the interaction as that answer left it, with no error,
// as the first time, however long after (the deadline may have passed
// since, the server restarted). Another answer, another key or another
// caller still gets the conflict.
func (b *Broker) RespondIdempotent(ctx context.Context, id string, value json.RawMessage, key string) (*hitl.Interaction, error) {
	in, err := b.respond(ctx, id, value, key)
	return b.receipted(in), err
}

// respond is RespondIdempotent without the receipt.
func (b *Broker) respond(ctx context.Context, id string, value json.RawMessage, key string) (*hitl.Interaction, error) {
	if err := hitl.CheckAnswerKey(key); err != nil {
		return nil, err
	}
	in, err := b.Answerable(ctx, id)
	if err != nil {
		return nil, err
	}
	if in.Status != hitl.StatusPending {
		return b.answeredBefore(ctx, in, value, key)
	}
	now := b.now()
	if in.Expired(now) {
		return b.lateAnswer(ctx, in)
	}
	caller := hitl.CallerFrom(ctx)
	t, err := answerTransition(in, value, caller, now)
	if err != nil {
		return nil, err
	}
	t.IdempotencyKey = key
	if counted(in) {
		return b.countAnswer(ctx, in, t)
	}
	out, ev, err := b.store.Resolve(ctx, id, t)
	switch {
	case errors.Is(err, hitl.ErrNotPending):
		return b.answeredBefore(ctx, out, value, key)
	case errors.Is(err, hitl.ErrPastDeadline):
		return b.lateAnswer(ctx, out)
	case err != nil:
		return nil, fmt.Errorf("respond: %w", err)
	}
	b.resolved(ev)
	b.log.Info("interaction answered", "interaction_id", id, "type", string(out.Type), "by", caller.Name, "channel", caller.Channel)
	if ev.Next != nil {
		b.feed.publish(ev.Next)
		b.log.Info("rule created", "rule_id", t.Rule.ID, "effect", string(t.Rule.Effect), "source_agent", t.Rule.SourceAgent,
			"action", t.Rule.ActionName, "by", caller.Name, "interaction_id", id)
	}
	return out, nil
}

// answeredBefore answers an answer to in, which is no longer pending:
// in with no error when in holds this very answer (the retry of an
// answer whose reply was lost, see RespondIdempotent), else the error that
// says why it cannot be answered.
func (b *Broker) answeredBefore(ctx context.Context, in *hitl.Interaction, value json.RawMessage, key string) (*hitl.Interaction, error) {
	caller := hitl.CallerFrom(ctx)
	if sameAnswer(in, caller, value, key) || sameVoteValue(in, caller, value, key) {
		b.log.Info("answer repeated with its idempotency key", "interaction_id", in.ID, "by", caller.Name, "channel", caller.Channel)
		return in, nil
	}
	return in, notPending(in)
}

// sameAnswer reports whether in was answered by caller with value (as
// normalised) and the non-empty idempotency key.
func sameAnswer(in *hitl.Interaction, caller hitl.Caller, value json.RawMessage, key string) bool {
	r := in.Result
	if key == "" || in.Status != hitl.StatusAnswered || r == nil || r.TimedOut ||
		r.IdempotencyKey != key || r.RespondedBy != caller.Name {
		return false
	}
	v, err := normalizedValue(in, value)
	return err == nil && bytes.Equal(v, r.Value)
}

// lateAnswer expires an interaction whose deadline passed before the
// sweeper got to it, and reports the answer as too late.
func (b *Broker) lateAnswer(ctx context.Context, in *hitl.Interaction) (*hitl.Interaction, error) {
	out, err := b.expiry.expireOne(ctx, in)
	if err != nil {
		return nil, err
	}
	return out, notPending(out)
}

// Cancel withdraws a pending interaction for the reason given ("" means
// agent_cancelled). Cancelling a cancelled interaction returns it unchanged.
// An agent may cancel only what it created; a responder nothing.
func (b *Broker) Cancel(ctx context.Context, id string, reason string) (*hitl.Interaction, error) {
	if reason == "" {
		reason = hitl.CancelledByAgent
	}
	if len(reason) > 1000 {
		return nil, hitl.Errorf(hitl.EINVALID, "reason is limited to 1000 bytes")
	}
	caller := hitl.CallerFrom(ctx)
	if err := hitl.CanCancel(caller); err != nil {
		return nil, err
	}
	var from *hitl.Interaction
	if caller.Role == hitl.RoleAgent {
		// Its creator never changes, so checking before the
		// compare-and-set is enough.
		in, err := b.visibleRecent(ctx, id)
		if err != nil {
			return nil, err
		}
		from = in
	}
	out, ev, err := b.store.Resolve(ctx, id, hitl.Transition{
		Status: hitl.StatusCancelled, By: caller.Name, Via: caller.Channel, At: b.now(), Reason: reason, From: from,
	})
	switch {
	case errors.Is(err, hitl.ErrNotPending) && out.Status == hitl.StatusCancelled:
		return out, nil
	case errors.Is(err, hitl.ErrNotPending):
		return out, notPending(out)
	case err != nil:
		return nil, err
	}
	b.resolved(ev)
	b.log.Info("interaction cancelled", "interaction_id", id, "by", caller.Name, "channel", caller.Channel, "reason", reason)
	return out, nil
}

// AppendEvent records an event that does not change the status, such as a
// notification sent on some channel, and streams it.
func (b *Broker) AppendEvent(ctx context.Context, ev *hitl.Event) (*hitl.Event, error) {
	if ev.At.IsZero() {
		ev.At = b.now()
	}
	out, err := b.store.AppendEvent(ctx, ev)
	if err != nil {
		return nil, fmt.Errorf("append event: %w", err)
	}
	b.feed.publish(out)
	return out, nil
}

// resolved wakes the interaction's waiters and streams its terminal event.
// Waking here, rather than when the feed delivers the event, keeps a local
// answer from waiting behind events still on their way.
func (b *Broker) resolved(ev *hitl.Event) {
	b.recent.put(ev) // before the wake-up: see recent
	if b.waiters.wake(ev.Interaction) {
		// Let the woken agents' goroutines run before this one goes on to
		// stream the event and answer its own caller: the agent's wake-up
		// is the latency that matters (about 35 µs off the median).
		runtime.Gosched()
	}
	b.feed.publish(ev)
}

// delivered is called by the feed for every event it delivers, in order,
// including those committed by other processes sharing the store: a
// terminal event wakes this broker's waiters, and a new deadline arms its
// timer, so a deadline still fires when the replica that set it is gone.
func (b *Broker) delivered(ev *hitl.Event) {
	in := ev.Interaction
	if in == nil {
		return
	}
	b.recent.put(ev) // before the wake-up: see recent
	switch ev.Type {
	case hitl.EventAnswered, hitl.EventExpired, hitl.EventCancelled:
		b.waiters.wake(in)
	case hitl.EventCreated:
		if in.Status == hitl.StatusPending && !in.Deadline.IsZero() {
			b.expiry.scheduled(in.Deadline)
		}
		if in.Status == hitl.StatusPending && len(in.Escalation) > 0 {
			b.escalator.wake() // its steps may be due before the timer looks
		}
	}
}
