package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// purgeAge is the --older-than of the history's purge: everything the
// phase answered is older than that by the time the purge starts.
const purgeAge = time.Second

// purge deletes the history's n answered interactions with "hitl purge",
// as an operator would while the server runs, and answers questions one
// after another meanwhile, to show whether the purge holds up the writer.
func (r *curveRun) purge(ctx context.Context, n int) (*PurgeFigures, error) {
	time.Sleep(purgeAge) // the last answers must be older than the cut-off
	r.progress("%s: purging %s answered interactions while answering", r.kind.phase, count(n))
	stop := make(chan struct{})
	type answers struct {
		samples []time.Duration
		lost    int
		err     error
	}
	during := make(chan answers, 1)
	go func() {
		a := newAPI(r.srv, 4)
		defer a.close()
		var got answers
		for i := 0; ; i++ {
			select {
			case <-stop:
				during <- got
				return
			default:
			}
			d, ok, err := unblockOne(ctx, a, i)
			switch {
			case err != nil:
				got.err = fmt.Errorf("unblock: %w", err)
				during <- got
				return
			case !ok:
				got.lost++
			default:
				got.samples = append(got.samples, d)
			}
		}
	}()
	t0 := time.Now()
	err := r.cfg.Purge(ctx, r.kind.phase, purgeAge)
	took := time.Since(t0)
	close(stop)
	a := <-during
	if err = errors.Join(err, a.err); err != nil {
		return nil, fmt.Errorf("%s: purge: %w", r.kind.phase, err)
	}
	d := summarize(a.samples)
	f := &PurgeFigures{Interactions: n, Seconds: round3(took.Seconds()), Answers: d.N, UnblockP99Ms: ms(d.P99), LostWakeups: a.lost}
	r.progress("%s: purged in %.3f s; %d answers meanwhile, unblock p99 %.3f ms", r.kind.phase, f.Seconds, f.Answers, f.UnblockP99Ms)
	return f, nil
}
