package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// testTextNUL passes text the domain keeps out of requests but a Go caller
// can still hand a store (a NUL byte, which PostgreSQL text refuses, and
// invalid UTF-8): a store keeps it exactly, or refuses it with EINVALID
// and writes nothing; never an internal error.
func testTextNUL(t *testing.T, s hitl.Store) {
	for name, bad := range map[string]string{"NUL": "a\x00b", "NotUTF8": "a\xffb"} {
		t.Run(name, func(t *testing.T) {
			in := create(t, s, askAt(t, base, 60))
			seq := lastSeq(t, s)

			ev := notified(in, 5)
			ev.Detail = bad
			out, err := s.AppendEvent(t.Context(), ev)
			switch {
			case err == nil && out.Detail != bad:
				t.Errorf("AppendEvent: got detail %q, want %q", out.Detail, bad)
			case err != nil:
				wantCode(t, "AppendEvent", err, hitl.EINVALID)
				if got := lastSeq(t, s); got != seq {
					t.Errorf("LastEventSeq after a refused AppendEvent: got %d, want %d", got, seq)
				}
			}

			tr := cancel(at(6))
			tr.Reason = bad
			done, _, err := s.Resolve(t.Context(), in.ID, tr)
			switch {
			case err == nil:
				if d := cmp.Diff(resolved(in, tr), done); d != "" {
					t.Errorf("Resolve (-want +got):\n%s", d)
				}
			default:
				wantCode(t, "Resolve", err, hitl.EINVALID)
				if d := cmp.Diff(in, get(t, s, in.ID)); d != "" {
					t.Errorf("interaction changed by a refused Resolve (-want +got):\n%s", d)
				}
			}

			_, _, err = s.ListInteractions(t.Context(), hitl.ListFilter{IdempotencyKey: bad, CreatedBy: bad})
			if err != nil {
				wantCode(t, "ListInteractions", err, hitl.EINVALID)
			}
		})
	}
}
