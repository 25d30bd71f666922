package bench

import (
	"slices"
	"time"
)

// dist summarises a set of latency samples.
type dist struct {
	N                  int
	P50, P95, P99, Max time.Duration
}

// summarize returns the percentiles of samples (nearest rank); samples is
// sorted in place.
func summarize(samples []time.Duration) dist {
	if len(samples) == 0 {
		return dist{}
	}
	slices.Sort(samples)
	return dist{
		N:   len(samples),
		P50: percentile(samples, 50),
		P95: percentile(samples, 95),
		P99: percentile(samples, 99),
		Max: samples[len(samples)-1],
	}
}

// percentile returns the p-th percentile of sorted samples by nearest rank:
// the smallest sample with at least p% of the samples at or below it.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted)) + 0.999999999)
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// ms returns d in milliseconds, rounded to the microsecond.
func ms(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// median returns the median of xs (the mean of the middle two for an even
// count), without modifying xs.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
