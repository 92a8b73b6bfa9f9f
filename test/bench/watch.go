//go:build e2e

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Watch load shape.
const (
	// updaters is how many patches may be in flight, so that one slow
	// write does not hold back the update rate.
	updaters = 8
	// updatedPods is how many pods the updates cycle through.
	updatedPods = 200
	// deliveryGrace bounds the wait for the last events after the last
	// write.
	deliveryGrace = 30 * time.Second
)

// watchResult is one server's watch-delivery figures of one round.
type watchResult struct {
	p50, p99 time.Duration
	// delivered counts events received over all watchers; want is what
	// they should have received.
	delivered, want int
	// cpuPer1k is the server's CPU per 1,000 cloud updates delivered to
	// all watchers.
	cpuPer1k time.Duration
	updates  int
	// resumed is how many times the server ended a watch that was then
	// opened again from its last resourceVersion.
	resumed int
}

// watchRun is one measurement: writes stamped with their send time and
// the delays the watchers saw.
type watchRun struct {
	sent []atomic.Int64 // unix nanos of each update's write, by seq

	// resumed counts watches the server ended that were opened again.
	resumed atomic.Int64

	mu sync.Mutex
	// delays are the delivery delays seen so far. Guarded by mu.
	delays []time.Duration
}

// measureWatch opens cfg.Watchers watches of the node's pods on s, writes
// cfg.UpdatesPerSec pod updates per second to the cloud for cfg.WatchFor,
// and measures each event's delay from the start of its cloud write.
func measureWatch(ctx context.Context, s *server, cloud kubernetes.Interface, node string, cfg Config, seqBase int) (watchResult, error) {
	n := int(cfg.WatchFor.Seconds() * float64(cfg.UpdatesPerSec))
	run := &watchRun{sent: make([]atomic.Int64, n)}
	rv, err := currentRV(ctx, s, node)
	if err != nil {
		return watchResult{}, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	counts := make([]atomic.Int64, cfg.Watchers)
	errs := make(chan error, cfg.Watchers)
	ready := sync.WaitGroup{}
	ready.Add(cfg.Watchers)
	for w := range cfg.Watchers {
		wg.Go(func() {
			errs <- run.watch(wctx, s, node, rv, seqBase, &counts[w], ready.Done)
		})
	}
	ready.Wait()
	cpu0, err := s.cpu()
	if err != nil {
		return watchResult{}, err
	}
	if err := run.update(ctx, cloud, cfg.UpdatesPerSec, min(updatedPods, cfg.Pods), seqBase); err != nil {
		return watchResult{}, err
	}
	waitDelivered(ctx, counts, int64(n))
	cpu1, err := s.cpu()
	if err != nil {
		return watchResult{}, err
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return watchResult{}, err
		}
	}
	return run.result(counts, n, cpu1-cpu0), nil
}

// currentRV returns the resource version s reports for the node's pods.
func currentRV(ctx context.Context, s *server, node string) (string, error) {
	l, err := s.json.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: podSelector(node), Limit: 1})
	if err != nil {
		return "", fmt.Errorf("%s list for resource version: %w", s.name, err)
	}
	return l.ResourceVersion, nil
}

// watch streams one JSON watch and records the delay of every event that
// carries a sequence number of this run. It calls ready once the server
// has answered. When the server ends the stream (kube-apiserver closes a
// watcher it finds unresponsive), it watches again from the last
// resourceVersion it saw, as client-go's reflector does, and counts the
// resume in run.resumed.
func (run *watchRun) watch(ctx context.Context, s *server, node, rv string, seqBase int, count *atomic.Int64, ready func()) error {
	once := sync.OnceFunc(ready)
	defer once()
	for {
		err := run.watchOnce(ctx, s, node, &rv, seqBase, count, once)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return err
		}
		run.resumed.Add(1)
	}
}

// watchOnce is one watch request from *rv; *rv follows the events read.
func (run *watchRun) watchOnce(ctx context.Context, s *server, node string, rv *string, seqBase int, count *atomic.Int64, ready func()) error {
	q := url.Values{"watch": {"1"}, "fieldSelector": {podSelector(node)}, "resourceVersion": {*rv}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/api/v1/pods?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", mediaJSON)
	resp, err := s.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s watch: %w", s.name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s watch: %s", s.name, resp.Status)
	}
	ready()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev json.RawMessage
		if err := dec.Decode(&ev); err != nil {
			return fmt.Errorf("%s watch: %w", s.name, err)
		}
		at := time.Now()
		if v, ok := eventRV(ev); ok {
			*rv = v
		}
		seq, ok := eventSeq(ev)
		if !ok || seq < seqBase || seq-seqBase >= len(run.sent) {
			continue
		}
		sent := run.sent[seq-seqBase].Load()
		run.mu.Lock()
		run.delays = append(run.delays, at.Sub(time.Unix(0, sent)))
		run.mu.Unlock()
		count.Add(1)
	}
}

// rvKey precedes an object's resourceVersion in its JSON; the first one in
// a pod's watch event is its metadata's.
var rvKey = []byte(`"resourceVersion":"`)

// eventRV finds the resourceVersion of a JSON watch event's object without
// decoding it.
func eventRV(ev []byte) (string, bool) {
	i := bytes.Index(ev, rvKey)
	if i < 0 {
		return "", false
	}
	rest := ev[i+len(rvKey):]
	j := bytes.IndexByte(rest, '"')
	if j <= 0 {
		return "", false
	}
	return string(rest[:j]), true
}

// seqKey precedes the sequence number in a pod's JSON.
var seqKey = []byte(`"` + SeqAnnotation + `":"`)

// eventSeq finds the sequence annotation in a JSON watch event without
// decoding it, so that the client's decode cost stays out of the figure.
func eventSeq(ev []byte) (int, bool) {
	i := bytes.Index(ev, seqKey)
	if i < 0 {
		return 0, false
	}
	rest := ev[i+len(seqKey):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return 0, false
	}
	seq, err := strconv.Atoi(string(rest[:j]))
	return seq, err == nil
}

// update patches pods at the given rate, stamping each write's sequence
// number into the pod and its start time into run.sent.
func (run *watchRun) update(ctx context.Context, cloud kubernetes.Interface, perSec, pods, seqBase int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seqs := make(chan int)
	errs := make(chan error, updaters)
	var wg sync.WaitGroup
	for range updaters {
		wg.Go(func() {
			for seq := range seqs {
				patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"%d"}}}`, SeqAnnotation, seq)
				run.sent[seq-seqBase].Store(time.Now().UnixNano())
				name := podName(seq % pods)
				if _, err := cloud.CoreV1().Pods(benchNamespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					errs <- fmt.Errorf("patch %s: %w", name, err)
					cancel()
					return
				}
			}
		})
	}
	tick := time.NewTicker(time.Second / time.Duration(perSec))
	defer tick.Stop()
feed:
	for i := range run.sent {
		select {
		case <-ctx.Done():
			break feed
		case <-tick.C:
		}
		select {
		case <-ctx.Done():
			break feed
		case seqs <- seqBase + i:
		}
	}
	close(seqs)
	wg.Wait()
	close(errs)
	return <-errs
}

// waitDelivered waits until every watcher has seen want events, or until
// deliveryGrace passes.
func waitDelivered(ctx context.Context, counts []atomic.Int64, want int64) {
	deadline := time.Now().Add(deliveryGrace)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		done := true
		for i := range counts {
			if counts[i].Load() < want {
				done = false
				break
			}
		}
		if done {
			return
		}
		time.Sleep(pollEvery)
	}
}

func (run *watchRun) result(counts []atomic.Int64, n int, cpu time.Duration) watchResult {
	run.mu.Lock()
	defer run.mu.Unlock()
	r := watchResult{want: n * len(counts), updates: n, resumed: int(run.resumed.Load())}
	for i := range counts {
		r.delivered += int(counts[i].Load())
	}
	if n > 0 {
		r.cpuPer1k = cpu * 1000 / time.Duration(n)
	}
	if len(run.delays) > 0 {
		d := slices.Clone(run.delays)
		slices.Sort(d)
		r.p50, r.p99 = percentile(d, 0.50), percentile(d, 0.99)
	}
	return r
}

// percentile returns the p-quantile of sorted ds, nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	i := int(float64(len(ds))*p+0.999999) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}
