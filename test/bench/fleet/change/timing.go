//go:build e2e

package change

import (
	"context"
	"net/http"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// Requests are the creates one node's part of the change takes: its
// secret, configmap and pod, one after another.
const Requests = 3

// Timing is one node's part of the change, timed at the wire.
type Timing struct {
	// Called is when the part's creates were called and Err their
	// outcome; the caller sets both.
	Called time.Time
	Err    error
	// sent is when the first request left for the cloud (after the
	// client's rate limiter) and answered when the cloud's last answer
	// arrived; zero when never.
	sent, answered time.Time
	// slowest is the longest one request waited for its answer.
	slowest time.Duration
	// attempts counts the requests client-go made (Requests, more when it
	// retried an answer); code is the last one's HTTP status.
	attempts, code int
	// levelUID is the API Priority and Fairness priority level that
	// handled the last attempt (X-Kubernetes-PF-PriorityLevel-UID).
	levelUID string
}

// timingKey is the context key of a request's *Timing.
type timingKey struct{}

// WithTiming makes the requests made with ctx through a Wrap'd client
// note their wire times in t.
func WithTiming(ctx context.Context, t *Timing) context.Context {
	return context.WithValue(ctx, timingKey{}, t)
}

// Wrap is a rest.Config's WrapTransport that notes the wire times of
// requests whose context carries a *Timing.
func Wrap(rt http.RoundTripper) http.RoundTripper { return timedTransport{next: rt} }

// timedTransport notes the wire times of requests whose context carries a
// *Timing.
type timedTransport struct{ next http.RoundTripper }

func (t timedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ct, _ := req.Context().Value(timingKey{}).(*Timing)
	if ct == nil {
		return t.next.RoundTrip(req)
	}
	sent := time.Now()
	resp, err := t.next.RoundTrip(req)
	if ct.attempts == 0 {
		ct.sent = sent
	}
	ct.attempts++
	ct.answered = time.Now()
	ct.slowest = max(ct.slowest, ct.answered.Sub(sent))
	if resp != nil {
		ct.code = resp.StatusCode
		ct.levelUID = resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID)
	}
	return resp, err
}
