package receipt_test

import (
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/receipt"
)

// BenchmarkIssueReceipt is the cost the broker adds to each read of an
// approved action (it signs on every read rather than store the token).
func BenchmarkIssueReceipt(b *testing.B) {
	s := newBenchService(b)
	in := approved("")
	for b.Loop() {
		if _, err := s.IssueReceipt(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify is an offline verification against a key set held.
func BenchmarkVerify(b *testing.B) {
	s := newBenchService(b)
	token, err := s.IssueReceipt(approved(""))
	if err != nil {
		b.Fatal(err)
	}
	set, err := s.KeySet(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	expect := hitl.ReceiptExpectation{Args: approved("").Action.Args}
	for b.Loop() {
		if _, err := receipt.Verify(token, set, expect, approvedAt); err != nil {
			b.Fatal(err)
		}
	}
}

func newBenchService(b *testing.B) *receipt.Service {
	b.Helper()
	s := receipt.New(nil, &receipt.Options{Now: func() time.Time { return approvedAt }})
	if err := s.Start(b.Context()); err != nil { // no cipher: a key in memory, no store
		b.Fatal(err)
	}
	return s
}
