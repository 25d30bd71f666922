package server

import (
	"context"
	"math"
	"net/http"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus collectors, fed by the broker's
// ordered event stream.
type metrics struct {
	registry    *prometheus.Registry
	created     *prometheus.CounterVec
	answered    *prometheus.CounterVec
	expired     *prometheus.CounterVec
	cancelled   *prometheus.CounterVec
	pending     prometheus.GaugeFunc
	latency     *prometheus.HistogramVec
	streamsOpen *prometheus.GaugeVec
	parked      prometheus.Gauge
	held        prometheus.GaugeFunc
}

// newMetrics returns the server's collectors over b, registered on reg
// (a new registry with Go's and the process's collectors when nil); held
// says how many long-polls wait in their handlers.
func newMetrics(reg *prometheus.Registry, b *broker.Broker, held func() int64) *metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := &metrics{
		registry: reg,
		created: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hitl_interactions_created_total", Help: "Interactions created, by type and channel.",
		}, []string{"type", "channel"}),
		answered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hitl_interactions_answered_total", Help: "Interactions answered, by type and channel (timeout: default response applied).",
		}, []string{"type", "channel"}),
		expired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hitl_interactions_expired_total", Help: "Interactions expired unanswered, by type.",
		}, []string{"type"}),
		cancelled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hitl_interactions_cancelled_total", Help: "Interactions cancelled, by type and channel.",
		}, []string{"type", "channel"}),
		pending: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "hitl_interactions_pending", Help: "Interactions waiting for an answer.",
		}, func() float64 { return pendingNow(b) }),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "hitl_answer_latency_seconds",
			Help:    "Time from creation to answer, by type and channel.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600},
		}, []string{"type", "channel"}),
		streamsOpen: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hitl_streams_open", Help: "Open live streams receiving events, by kind (ws, sse).",
		}, []string{"kind"}),
		parked: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hitl_waits_parked", Help: "Long-polls waiting with their connection parked (no goroutine).",
		}),
		held: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "hitl_waits_held", Help: "Long-polls waiting in a goroutine of their own (the first few hundred; the rest are parked).",
		}, func() float64 { return float64(held()) }),
	}
	reg.MustRegister(m.created, m.answered, m.expired, m.cancelled, m.pending, m.latency, m.streamsOpen, m.parked, m.held)
	b.Observe(m.observe)
	return m
}

// pendingNow is the number of pending interactions, from the engine's own
// counts once it has them (a store count before), or NaN when it cannot be
// read: the gauge then shows no value rather than a wrong one.
func pendingNow(b *broker.Broker) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := b.CountInteractions(ctx, hitl.StatusPending)
	if err != nil {
		return math.NaN()
	}
	return float64(n)
}

// observe updates the counters for one event.
func (m *metrics) observe(ev *hitl.Event) {
	in := ev.Interaction
	typ := ""
	if in != nil {
		typ = string(in.Type)
	}
	switch ev.Type {
	case hitl.EventCreated:
		m.created.WithLabelValues(typ, ev.Channel).Inc()
	case hitl.EventAnswered:
		m.answered.WithLabelValues(typ, ev.Channel).Inc()
		if in != nil {
			m.latency.WithLabelValues(typ, ev.Channel).Observe(ev.At.Sub(in.CreatedAt).Seconds())
		}
	case hitl.EventExpired:
		m.expired.WithLabelValues(typ).Inc()
	case hitl.EventCancelled:
		m.cancelled.WithLabelValues(typ, ev.Channel).Inc()
	}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
