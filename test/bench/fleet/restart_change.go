//go:build e2e

package fleet

import (
	"context"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"net/http"
	"slices"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// changeRequests are the creates one node's part of the change takes: its
// secret, configmap and pod, one after another (createPod).
const changeRequests = 3

// createTiming is one node's part of the change, timed at the wire.
type createTiming struct {
	// called is when createPod was called; sent when its first request
	// left for the cloud (after the client's rate limiter) and answered
	// when the cloud's last answer arrived; zero when never.
	called, sent, answered time.Time
	// slowest is the longest one request waited for its answer.
	slowest time.Duration
	// attempts counts the requests client-go made (changeRequests, more
	// when it retried an answer); code is the last one's HTTP status.
	attempts, code int
	// levelUID is the API Priority and Fairness priority level that
	// handled the last attempt (X-Kubernetes-PF-PriorityLevel-UID).
	levelUID string
	err      error
}

// timingKey is the context key of a request's *createTiming.
type timingKey struct{}

// timedTransport notes the wire times of requests whose context carries a
// *createTiming. client-go makes one request's attempts one after another,
// so a timing is written by one goroutine at a time.
type timedTransport struct{ next http.RoundTripper }

func (t timedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ct, _ := req.Context().Value(timingKey{}).(*createTiming)
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

// changeClient is an admin client whose creates are timed at the wire,
// with its connection to the cloud already open, so that the change's
// creates do not wait on a TLS handshake.
func (f *fleet) changeClient(ctx context.Context) (kubernetes.Interface, error) {
	cfg := rest.CopyConfig(f.c.AdminConfig)
	cfg.QPS, cfg.Burst = bench.ClientQPS, bench.ClientBurst
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return timedTransport{next: rt} })
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, fleetNamespace, metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("open the change's connection: %w", err)
	}
	return cs, nil
}

// sendChange creates the pod <node>-<suffix> of node i, its creates
// timed, into ct; done is called once they are answered.
func (f *fleet) sendChange(ctx context.Context, cs kubernetes.Interface, i int, suffix string, ct *createTiming, done func()) {
	ct.called = time.Now()
	go func() {
		defer done()
		ct.err = createPod(context.WithValue(ctx, timingKey{}, ct), cs, nodeName(i), nodeName(i)+"-"+suffix)
	}()
}

// changeSummary is the change's creates, counted from the first SIGTERM.
type changeSummary struct {
	// creates are the nodes' parts of the change, changeRequests each.
	creates int
	// firstCalled, lastSent, firstAnswered and lastAnswered bound the
	// nodes' parts; the last answer is when the change was made.
	firstCalled, lastSent, firstAnswered, lastAnswered time.Duration
	// medianLatency and maxLatency are a node's part's last answer after
	// its first sending; slowest the longest one request waited.
	medianLatency, maxLatency, slowest time.Duration
	// failed parts ended in an error; retried took more requests than
	// changeRequests (client-go retried an answer); unsent were never
	// sent (their daemon did not exit).
	failed, retried, unsent int
	// levelUIDs are the priority levels that handled them.
	levelUIDs []string
	// firstErr is the first failed create's error.
	firstErr error
}

// summarizeChange reads the creates' timings against start.
func summarizeChange(start time.Time, ts []createTiming) changeSummary {
	s := changeSummary{creates: len(ts)}
	var lat []time.Duration
	called := 0
	for _, t := range ts {
		if t.called.IsZero() {
			s.unsent++
			continue
		}
		if called++; called == 1 || t.called.Sub(start) < s.firstCalled {
			s.firstCalled = t.called.Sub(start)
		}
		if t.err != nil {
			s.failed++
			if s.firstErr == nil {
				s.firstErr = t.err
			}
		}
		if t.attempts > changeRequests {
			s.retried++
		}
		if t.attempts == 0 {
			continue
		}
		sent, ans := t.sent.Sub(start), t.answered.Sub(start)
		s.lastSent = max(s.lastSent, sent)
		if len(lat) == 0 || ans < s.firstAnswered {
			s.firstAnswered = ans
		}
		s.lastAnswered = max(s.lastAnswered, ans)
		lat = append(lat, ans-sent)
		s.slowest = max(s.slowest, t.slowest)
		if t.levelUID != "" && !slices.Contains(s.levelUIDs, t.levelUID) {
			s.levelUIDs = append(s.levelUIDs, t.levelUID)
		}
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		s.medianLatency, s.maxLatency = lat[len(lat)/2], lat[len(lat)-1]
	}
	return s
}

// check is what makes the change unsound: a create that failed or was
// never answered.
func (s changeSummary) check() error {
	switch {
	case s.creates == 0:
		return fmt.Errorf("figure missing: the change made no create")
	case s.unsent > 0:
		return fmt.Errorf("figure missing: %d of the change's %d nodes' creates never sent", s.unsent, s.creates)
	case s.failed > 0:
		return fmt.Errorf("%d of the change's %d creates failed, the first: %w", s.failed, s.creates, s.firstErr)
	case s.lastAnswered <= 0:
		return fmt.Errorf("figure missing: the change's creates were never answered")
	}
	return nil
}

// levelNames names the priority levels of uids, from the cloud's
// PriorityLevelConfigurations; an unknown UID stays as it is.
func (f *fleet) levelNames(ctx context.Context, uids []string) ([]string, error) {
	list, err := f.admin.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return uids, fmt.Errorf("priority levels: %w", err)
	}
	var out []string
	for _, uid := range uids {
		name := uid
		for _, pl := range list.Items {
			if string(pl.UID) == uid {
				name = pl.Name
			}
		}
		out = append(out, name)
	}
	return out, nil
}
