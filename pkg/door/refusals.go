package door

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// refusalLogInterval is how often, at most, a door logs the refusals
// (401s, refused connections and handshakes, spent budgets) it counted
// since its last such line: a flood of forged tokens costs a line per
// interval, not one per request.
const refusalLogInterval = 10 * time.Second

// refusalLog counts refusals by reason and logs them at most once per
// refusalLogInterval.
type refusalLog struct {
	clock clock.PassiveClock // immutable
	log   *slog.Logger       // immutable

	mu     sync.Mutex
	counts map[string]int // guarded by mu; refusals by reason since logged
	logged time.Time      // guarded by mu; when counts were last logged
}

func newRefusalLog(clk clock.PassiveClock, log *slog.Logger) *refusalLog {
	return &refusalLog{clock: clk, log: log, counts: map[string]int{}, logged: clk.Now()}
}

// note counts one refusal for reason and logs the counts when the last
// line is older than refusalLogInterval.
func (r *refusalLog) note(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts[reason]++
	now := r.clock.Now()
	if now.Sub(r.logged) < refusalLogInterval {
		return
	}
	for reason, n := range r.counts {
		r.log.Warn("door refusals", "reason", reason, "count", n, "since", r.logged.UTC().Format(time.RFC3339))
	}
	clear(r.counts)
	r.logged = now
}

// unauthorized answers 401. An HTTP/1.x connection is then closed; an
// HTTP/2 connection is sent GOAWAY after maxConsecutiveUnauthorized 401s
// with no authenticated request between them.
func (l *Limiter) unauthorized(w http.ResponseWriter, r *http.Request) {
	l.refusals.note("unauthenticated request")
	l.unauthenticated()
	dc := connFrom(r.Context())
	switch {
	case r.ProtoMajor < 2:
		w.Header().Set("Connection", "close")
	case dc != nil && dc.unauthorized.Add(1) >= maxConsecutiveUnauthorized:
		w.Header().Set("Connection", "close") // net/http sends GOAWAY for it on HTTP/2
	}
	unauthorized(w)
}

// authenticated notes that r's connection carried an authenticated
// request: its 401 count starts over and it keeps the server's idle
// timeout.
func (l *Limiter) authenticated(r *http.Request) {
	if dc := connFrom(r.Context()); dc != nil {
		dc.unauthorized.Store(0)
		dc.authenticated.Store(true)
	}
}

// tooManyRefused answers 429 for a spent budget and counts it.
func (l *Limiter) tooManyRefused(w http.ResponseWriter, err error) {
	l.refusals.note("review budget spent")
	tooMany(w, err.Error(), retryAfterOfBudget(err))
}
