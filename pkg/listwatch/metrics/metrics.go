package metrics

import (
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/utils/clock"
)

// ResourceStats is one resource's state, read at scrape time.
type ResourceStats struct {
	Resource string // the resource's key, e.g. "/v1/pods?fieldSelector=..."
	Ready    bool
	RV       uint64 // the watermark: every cloud change up to it is durable
	Objects  int
	Events   int // events held for local watches
	Watchers int
	TooSlow  uint64 // watchers closed because they fell behind
	// Idle marks a resource held only on request that is not held now:
	// it has no staleness to report.
	Idle bool
}

// Sources are read at every scrape.
type Sources struct {
	Resources func() []ResourceStats // nil means none
	LinkUp    func() bool            // nil means down
	// CloudWatches is how many watches the daemon holds open on the
	// cloud; nil reports none.
	CloudWatches func() int
	// Store is the store's size; nil, or false, means unknown.
	Store func() (StoreStats, bool)
	// Sealed says whether the store has a state key; nil means it has
	// none.
	Sealed func() bool
}

// Metrics is the daemon's registry and its push-side metrics. Safe for
// concurrent use.
type Metrics struct {
	reg   *prometheus.Registry
	clock clock.PassiveClock
	// started is when New ran: a resource never heard from is stale
	// since then.
	started time.Time

	relists       *prometheus.CounterVec
	relistBytes   *prometheus.CounterVec
	cloudErrors   *prometheus.CounterVec
	commitSeconds *prometheus.HistogramVec
	commitErrors  *prometheus.CounterVec
	eventsApplied *prometheus.CounterVec
	requests      *prometheus.CounterVec
	requestSecs   *prometheus.HistogramVec
	authFailures  *prometheus.CounterVec

	mu sync.Mutex
	// collectors are every collector on reg, for Describe. Guarded by mu.
	collectors []prometheus.Collector
	// heard is when each resource last heard from the cloud. Guarded by mu.
	heard map[string]time.Time
	// lastErr is each resource's last sync failure. Guarded by mu.
	lastErr map[string]ErrorRecord
	// lastCommitErr is the last commit's error, nil after a good commit.
	// Guarded by mu.
	lastCommitErr error
	// inFlight holds the start time of each commit in flight, by the id
	// CommitStarted gave it. Guarded by mu.
	inFlight map[uint64]time.Time
	// nextCommit is the id of the next commit. Guarded by mu.
	nextCommit uint64
}

// Commit is a commit in flight, from CommitStarted to CommitDone.
type Commit struct {
	id    uint64
	start time.Time
}

// ErrorRecord is a resource's last sync failure.
type ErrorRecord struct {
	Time    time.Time `json:"time"`
	Code    string    `json:"code"`
	Message string    `json:"message"`
}

// New registers every metric on a fresh registry. c nil means the real
// clock.
func New(c clock.PassiveClock, src Sources) *Metrics {
	if c == nil {
		c = clock.RealClock{}
	}
	m := &Metrics{reg: prometheus.NewRegistry(), clock: c, started: c.Now(),
		heard: map[string]time.Time{}, lastErr: map[string]ErrorRecord{}, inFlight: map[uint64]time.Time{}}
	m.newSyncMetrics()
	m.newRequestMetrics()
	m.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.relists, m.relistBytes, m.cloudErrors, m.commitSeconds, m.commitErrors, m.eventsApplied,
		m.requests, m.requestSecs, m.authFailures,
		&stateCollector{m: m, src: src}, nodeCollector{src: src},
	)
	return m
}

// Registry returns the registry, for tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// MustRegister adds cs to the registry (panicking as the registry does on
// a duplicate) and to what Describe describes.
func (m *Metrics) MustRegister(cs ...prometheus.Collector) {
	m.reg.MustRegister(cs...)
	m.mu.Lock()
	m.collectors = append(m.collectors, cs...)
	m.mu.Unlock()
}

// Describe sends the description of every metric registered, including
// label vectors never observed, which a scrape does not show: the
// dashboard's and alert rules' test checks their names against it.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.mu.Lock()
	cs := slices.Clone(m.collectors)
	m.mu.Unlock()
	for _, c := range cs {
		c.Describe(ch)
	}
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
