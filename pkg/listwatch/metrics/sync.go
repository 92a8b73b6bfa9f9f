package metrics

import (
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// commitBuckets (seconds) span a cached write (0.5 ms) to a disk stalled
// for seconds; an fsync on flash is a few ms.
var commitBuckets = prometheus.ExponentialBuckets(0.0005, 2, 14)

// codeTransport labels a cloud error that carried no HTTP status: a
// refused, reset or timed-out connection.
const codeTransport = "transport"

// maxErrorMessage (bytes) bounds a stored error message.
const maxErrorMessage = 512

func (m *Metrics) newSyncMetrics() {
	m.relists = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_lite_relists_total",
		Help: "Full lists of a resource from the cloud, by reason (initial, expired, regressed).",
	}, []string{"resource", "reason"})
	m.relistBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_lite_relist_bytes_total",
		Help: "Bytes of whole objects received from the cloud by relists (their JSON as stored; a lean relist counts only the objects it fetched).",
	}, []string{"resource"})
	m.cloudErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_lite_cloud_errors_total",
		Help: "Failed sync attempts against the cloud, by HTTP code or \"transport\".",
	}, []string{"resource", "code"})
	m.commitSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_lite_commit_duration_seconds",
		Help:    "Latency of committing a batch of cloud changes to the store.",
		Buckets: commitBuckets,
	}, []string{"resource"})
	m.commitErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_lite_commit_errors_total",
		Help: "Failed commits of cloud changes to the store.",
	}, []string{"resource"})
	m.eventsApplied = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_cache_events_received_total",
		Help: "Cloud changes made durable and applied to the local cache.",
	}, []string{"resource"})
}

// Relisted counts a relist (cloudsync.Observer).
func (m *Metrics) Relisted(resource, reason string) {
	m.relists.WithLabelValues(resource, reason).Inc()
}

// RelistBytes counts n bytes of whole objects a relist received
// (cloudsync.Observer).
func (m *Metrics) RelistBytes(resource string, n int) {
	m.relistBytes.WithLabelValues(resource).Add(float64(n))
}

// CloudError counts a failed sync attempt and keeps it as the resource's
// last error (cloudsync.Observer).
func (m *Metrics) CloudError(resource string, err error) {
	code := ErrorCode(err)
	m.cloudErrors.WithLabelValues(resource, code).Inc()
	msg := err.Error()
	if len(msg) > maxErrorMessage {
		msg = msg[:maxErrorMessage]
	}
	m.mu.Lock()
	m.lastErr[resource] = ErrorRecord{Time: m.clock.Now(), Code: code, Message: msg}
	m.mu.Unlock()
}

// CloudHeard records that resource is current as of now
// (cloudsync.Observer).
func (m *Metrics) CloudHeard(resource string) {
	m.mu.Lock()
	m.heard[resource] = m.clock.Now()
	m.mu.Unlock()
}

// CommitStarted marks a commit in flight; pass the result to CommitDone
// when it ends.
func (m *Metrics) CommitStarted() Commit {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextCommit++
	m.inFlight[m.nextCommit] = now
	return Commit{id: m.nextCommit, start: now}
}

// CommitDone records the end of commit c, which made changes cloud
// changes durable unless err is set.
func (m *Metrics) CommitDone(resource string, c Commit, changes int, err error) {
	m.commitSeconds.WithLabelValues(resource).Observe(m.clock.Since(c.start).Seconds())
	if err != nil {
		m.commitErrors.WithLabelValues(resource).Inc()
	} else {
		m.eventsApplied.WithLabelValues(resource).Add(float64(changes))
	}
	m.mu.Lock()
	delete(m.inFlight, c.id)
	m.lastCommitErr = err
	m.mu.Unlock()
}

// CommitState returns the error of the last commit (nil if it succeeded or
// none ran) and how long the oldest commit in flight has run (0 if none).
func (m *Metrics) CommitState() (lastErr error, oldest time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, start := range m.inFlight {
		oldest = max(oldest, m.clock.Since(start))
	}
	return m.lastCommitErr, oldest
}

// Staleness returns how long ago resource last heard from the cloud, and
// whether it heard at all since the daemon started. One never heard from
// is as stale as the daemon is old: a daemon that never reached the cloud
// must not look fresh.
func (m *Metrics) Staleness(resource string) (time.Duration, bool) {
	m.mu.Lock()
	t, ok := m.heard[resource]
	m.mu.Unlock()
	if !ok {
		return m.clock.Since(m.started), false
	}
	return m.clock.Since(t), true
}

// LastError returns resource's last sync failure, if any.
func (m *Metrics) LastError(resource string) (ErrorRecord, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.lastErr[resource]
	return e, ok
}

// ErrorCode labels err by the HTTP code of the cloud's answer, or
// "transport" when it carried none.
func ErrorCode(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Code != 0 {
		return strconv.Itoa(int(st.Status().Code))
	}
	return codeTransport
}
