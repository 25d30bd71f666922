package broker

import "github.com/hitl-sh/hitl"

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
