//go:build e2e

package pool

import (
	"context"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"regexp"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// poolPollEvery is how often a member's metrics are read while waiting.
const poolPollEvery = 500 * time.Millisecond

// poolElectionUser is the identity the members' election runs as.
const poolElectionUser = "system:serviceaccount:" + poolBenchNS + ":" + poolBenchNS

// poolSide is one steady state of the site, counted over a window.
type poolSide struct {
	// link is every member's cloud link over the window, summed; leader
	// is the leader's part (zero unpooled).
	link, leader linkCount
	window       time.Duration
	// watches is the cloud's open watches above the count without
	// members at the window's end, by resource.
	watches map[string]int
	// requests are the site's identities' cloud requests in the window,
	// by "verb resource"; election those of the election's identity.
	requests map[string]int
	election int
	// updates is the churn's updates in the window.
	updates int
}

func (s poolSide) bytesPerMin() float64 { return float64(s.link.total()) / s.window.Minutes() }

// bytesPerUpdate is the link's bytes per EndpointSlice update written in
// the window: the churn's rate sags on a loaded machine, and almost every
// byte is an update's event.
func (s poolSide) bytesPerUpdate() float64 {
	if s.updates <= 0 {
		return 0
	}
	return float64(s.link.total()) / float64(s.updates)
}

func (s poolSide) electionPerMin() float64 { return float64(s.election) / s.window.Minutes() }

func (s poolSide) openWatches() int {
	n := 0
	for _, v := range s.watches {
		n += v
	}
	return n
}

// window counts the site's cloud link, requests and watches for the
// run's window.
func (p *poolRun) window(ctx context.Context, t testing.TB) (poolSide, error) {
	s := poolSide{}
	c0, l0, u0 := p.linkCount(), p.leaderCount(), p.churn.count()
	start := time.Now()
	time.Sleep(p.cfg.Window)
	c1, l1, u1 := p.linkCount(), p.leaderCount(), p.churn.count()
	s.window = time.Since(start)
	s.link, s.leader, s.updates = c1.minus(c0), l1.minus(l0), u1-u0
	w, err := bench.OpenWatchesByResource(ctx, p.c)
	if err != nil {
		return s, err
	}
	s.watches = map[string]int{}
	for r, n := range w {
		if d := n - p.baseWatches[r]; d != 0 {
			s.watches[r] = d
		}
	}
	s.requests = map[string]int{}
	for _, e := range p.c.CloudRequests(func(string) bool { return true }, start, start.Add(s.window)) {
		switch {
		case e.User.Username == poolElectionUser:
			s.election++
		case p.ofSite(e):
			s.requests[e.Verb+" "+e.Resource()]++
		}
	}
	t.Logf("pool: window: %d bytes, %d open watches, %d election requests", s.link.total(), s.openWatches(), s.election)
	return s, nil
}

// ofSite reports whether a cloud request is a member's: on its node's
// credentials or a token bound to one of its pods.
func (p *poolRun) ofSite(e framework.AuditEvent) bool {
	for _, m := range p.members {
		if p.ofMember(e, m) {
			return true
		}
	}
	return false
}

// ofMember reports whether a cloud request is m's.
func (p *poolRun) ofMember(e framework.AuditEvent, m *poolMember) bool {
	pod := e.PodName()
	return e.User.Username == "system:node:"+m.node.Name || (pod != "" && (pod == m.pods.proxy.Name || pod == m.pods.pool.Name))
}

// linkCount sums every member's link.
func (p *poolRun) linkCount() linkCount {
	var s linkCount
	for _, m := range p.members {
		c := m.link.count()
		s.up, s.down, s.open = s.up+c.up, s.down+c.down, s.open+c.open
	}
	return s
}

// leaderCount is the leader's link, zero without one.
func (p *poolRun) leaderCount() linkCount {
	if p.leader == nil {
		return linkCount{}
	}
	return p.leader.link.count()
}

// waitMetric waits until n's metrics match want.
func waitMetric(ctx context.Context, n *framework.Node, want *regexp.Regexp, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		m, err := n.Metrics(ctx)
		if err == nil && want.MatchString(m) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no %s in its metrics after %s (last error %v)", n.Name, want, timeout, err)
		}
		time.Sleep(poolPollEvery)
	}
}

// holdingSyncLine matches a member's metrics once it holds EndpointSlices
// for a pod.
func holdingSyncLine() *regexp.Regexp {
	return regexp.MustCompile(`apiserver_lite_pod_holding_sync_identity\{[^}]*resource="` + regexp.QuoteMeta(slicesHolding) + `"`)
}

// upstreamLine matches a follower's metrics once it reads EndpointSlices
// from leader.
func upstreamLine(leader string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(`apiserver_lite_pool_upstream{resource="` + slicesHolding + `",upstream="pool:` + leader + `"} 1`))
}

var poolLeaderLine = regexp.MustCompile(`apiserver_lite_pool_leader\{leader="([^"]+)",pool="` + poolBenchName + `",self="(true|false)"\} 1`)

// waitLeader waits until every member but gone names one leader other
// than gone, and returns it.
func (p *poolRun) waitLeader(ctx context.Context, gone *poolMember) (*poolMember, error) {
	deadline := time.Now().Add(poolStart)
	for time.Now().Before(deadline) {
		if l := p.agreedLeader(ctx, gone); l != nil {
			return l, nil
		}
		time.Sleep(poolPollEvery)
	}
	return nil, fmt.Errorf("no leader the pool agrees on after %s", poolStart)
}

// agreedLeader is the leader every member but gone names, or nil.
func (p *poolRun) agreedLeader(ctx context.Context, gone *poolMember) *poolMember {
	var leader *poolMember
	name := ""
	for _, m := range p.members {
		if m == gone {
			continue
		}
		body, err := m.node.Metrics(ctx)
		g := poolLeaderLine.FindStringSubmatch(body)
		if err != nil || g == nil || (name != "" && g[1] != name) || (gone != nil && g[1] == gone.node.Name) {
			return nil
		}
		name = g[1]
		if g[2] == "true" {
			leader = m
		}
	}
	if leader == nil || leader.node.Name != name {
		return nil
	}
	return leader
}
