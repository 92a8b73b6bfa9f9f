//go:build e2e

package pool

import (
	"context"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"strconv"
	"sync"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// seqLog is when a reader saw each churn update, by its sequence number.
type seqLog struct {
	mu sync.Mutex
	// at is when each sequence number was first seen. Guarded by mu.
	at map[int]time.Time
}

func newSeqLog() *seqLog { return &seqLog{at: map[int]time.Time{}} }

// record notes an EndpointSlice update's sequence annotation.
func (l *seqLog) record(obj any) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return
	}
	n, err := strconv.Atoi(s.Annotations[bench.SeqAnnotation])
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, seen := l.at[n]; !seen {
		l.at[n] = time.Now()
	}
}

// firstAfter is when the reader first saw an update written after since,
// and the updates written in [since, until) it never saw.
func (l *seqLog) firstAfter(writes []poolWrite, since, until time.Time) (time.Time, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	missed := 0
	for _, w := range writes {
		if w.at.Before(since) {
			continue
		}
		at, ok := l.at[w.seq]
		if !ok {
			if w.at.Before(until) {
				missed++
			}
			continue
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	return first, missed
}

// poolWrite is one churn update: its sequence number and when the cloud
// answered it.
type poolWrite struct {
	seq int
	at  time.Time
}

// poolChurn patches one EndpointSlice after another at a steady rate
// until stopped, and keeps when each was written.
type poolChurn struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	// writes are the updates the cloud accepted, in order. Guarded by mu.
	writes []poolWrite
	// err is the first failed update. Guarded by mu.
	err error
}

// startPoolChurn starts updating services' EndpointSlices perSec a
// second.
func startPoolChurn(ctx context.Context, cs kubernetes.Interface, services, perSec int) *poolChurn {
	ctx, cancel := context.WithCancel(ctx)
	c := &poolChurn{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		tick := time.NewTicker(time.Second / time.Duration(perSec))
		defer tick.Stop()
		for seq := 1; ; seq++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, bench.SeqAnnotation, strconv.Itoa(seq))
			name := bench.HeldServiceName(seq%services) + "-abcde"
			_, err := cs.DiscoveryV1().EndpointSlices(bench.HeldNamespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			c.mu.Lock()
			if err == nil {
				c.writes = append(c.writes, poolWrite{seq: seq, at: time.Now()})
			} else if c.err == nil && ctx.Err() == nil {
				c.err = fmt.Errorf("update endpointslice %s: %w", name, err)
			}
			c.mu.Unlock()
		}
	}()
	return c
}

func (c *poolChurn) stop() {
	c.cancel()
	<-c.done
}

// count is the updates written so far.
func (c *poolChurn) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.writes)
}

// snapshot is the updates written so far, and the first failure.
func (c *poolChurn) snapshot() ([]poolWrite, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]poolWrite(nil), c.writes...), c.err
}

// electionSize measures one election request's bytes on a member's link:
// the Lease GET a non-leader makes, on a token for the pool service
// account bound to the first member's pool pod, through a counting link
// of its own, the connection already open.
func (p *poolRun) electionSize(ctx context.Context, t testing.TB, res *poolResults) error {
	m := p.members[0]
	token, err := boundToken(ctx, p.admin, poolBenchNS, poolBenchNS, m.pods.pool, nil)
	if err != nil {
		return err
	}
	link := startCountingLink(t, m.link.target)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: link.url(), BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.c.ClusterCA()}})
	if err != nil {
		return err
	}
	leases := cs.CoordinationV1().Leases(poolBenchNS)
	if _, err := leases.Get(ctx, "pool-"+poolBenchName, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("get the pool's lease: %w", err)
	}
	before := link.count()
	for range poolElectionProbes {
		if _, err := leases.Get(ctx, "pool-"+poolBenchName, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("get the pool's lease: %w", err)
		}
	}
	res.electionRequestBytes = float64(link.count().minus(before).total()) / poolElectionProbes
	return nil
}

// failover kills the leader during the churn and measures how long until
// every follower's reader sees updates again, who leads next and how
// long until every follower reads from it, and what the followers listed
// at the cloud meanwhile.
func (p *poolRun) failover(ctx context.Context, res *poolResults) error {
	killed := time.Now()
	p.leader.node.Kill()
	p.leader.reader.Cancel()
	p.leader.reader = nil
	old := p.leader
	time.Sleep(poolAfterKill)
	leader, err := p.waitLeader(ctx, old)
	if err != nil {
		return err
	}
	p.leader, res.newLeader = leader, leader.node.Name
	for _, m := range p.othersThan(old, leader) {
		if err := waitMetric(ctx, m.node, upstreamLine(leader.node.Name), poolStart); err != nil {
			return fmt.Errorf("after the kill: %w", err)
		}
	}
	res.rejoined = time.Since(killed)
	time.Sleep(poolSettle)
	writes, err := p.churn.snapshot()
	if err != nil {
		return err
	}
	followers := p.othersThan(old)
	res.measureFailover(followers, writes, killed)
	for _, e := range p.c.CloudRequests(func(string) bool { return true }, killed, time.Now()) {
		for _, m := range followers {
			if e.Verb == "list" && p.ofMember(e, m) {
				res.followerLists = append(res.followerLists, e.User.Username+" "+e.RequestURI)
			}
		}
	}
	return nil
}

// measureFailover reads, from every follower's reader, how long after the
// kill it first saw an update written after it, and what it missed of
// those written until poolSettle ago.
func (r *poolResults) measureFailover(followers []*poolMember, writes []poolWrite, killed time.Time) {
	until := time.Now().Add(-poolSettle)
	for _, m := range followers {
		first, missed := m.seen.firstAfter(writes, killed, until)
		r.missed += missed
		if first.IsZero() {
			r.notRecovered = append(r.notRecovered, m.node.Name)
			continue
		}
		r.failover = max(r.failover, first.Sub(killed))
	}
}
