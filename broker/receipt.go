package broker

import (
	"context"
	"encoding/json"

	"github.com/hitl-sh/hitl"
)

// receipted returns in with its receipt in result.receipt when it is an
// approved action and the broker has a receipt issuer (Options.Receipts);
// otherwise in itself. in is not changed: it may be shared. A receipt
// that cannot be signed is left out and logged: a tool that checks
// receipts then refuses the call, which fails closed.
func (b *Broker) receipted(in *hitl.Interaction) *hitl.Interaction {
	if b.receipts == nil || in == nil || in.Type != hitl.TypeAction || in.Status != hitl.StatusAnswered || in.Result == nil {
		return in
	}
	token, err := b.receipts.IssueReceipt(in)
	if err != nil {
		b.log.Error("issue receipt", "interaction_id", in.ID, "error", err)
		return in
	}
	if token == "" {
		return in
	}
	out := *in
	r := *in.Result
	r.Receipt = token
	out.Result = &r
	return &out
}

// WithReceipt returns in with its receipt when it is an approved action
// and the broker signs receipts, else in: for what tells of an
// interaction outside the broker's reads (webhooks, callbacks).
func (b *Broker) WithReceipt(in *hitl.Interaction) *hitl.Interaction { return b.receipted(in) }

// receiptedAll is receipted over a page.
func (b *Broker) receiptedAll(ins []*hitl.Interaction) []*hitl.Interaction {
	if b.receipts == nil {
		return ins
	}
	for i, in := range ins {
		ins[i] = b.receipted(in)
	}
	return ins
}

// Unreceipted returns the broker as a hitl.Service that leaves approved
// actions' receipts out of what it returns: for a caller in this process
// that acts on the decision itself and hands the interaction to nothing
// that could check a receipt, such as the HTTP hook, which answers its
// agent allow or deny. Signing a receipt is the largest single cost of a
// call a rule decides. Everything else — who may see, ask, answer and
// cancel — is the broker's as it is.
func (b *Broker) Unreceipted() hitl.Service { return unreceipted{b} }

// unreceipted is Unreceipted's hitl.Service.
type unreceipted struct{ b *Broker }

var _ hitl.Service = unreceipted{}

func (u unreceipted) Create(ctx context.Context, req hitl.CreateRequest) (*hitl.Interaction, bool, error) {
	return u.b.create(ctx, req)
}

func (u unreceipted) Get(ctx context.Context, id string) (*hitl.Interaction, error) {
	return u.b.visible(ctx, id)
}

func (u unreceipted) List(ctx context.Context, f hitl.ListFilter) ([]*hitl.Interaction, string, error) {
	return u.b.list(ctx, f)
}

func (u unreceipted) Wait(ctx context.Context, id string) (*hitl.Interaction, error) {
	return u.b.wait(ctx, id)
}

func (u unreceipted) Respond(ctx context.Context, id string, value json.RawMessage) (*hitl.Interaction, error) {
	return u.b.respond(ctx, id, value, "")
}

func (u unreceipted) Cancel(ctx context.Context, id string, reason string) (*hitl.Interaction, error) {
	return u.b.Cancel(ctx, id, reason)
}
