//go:build e2e

package pool

import (
	"context"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// poolMember is one node of the site: its daemon, its link to the cloud,
// its pool door address, its pods and its reader.
type poolMember struct {
	node     *framework.Node
	link     *countingLink
	poolAddr string
	pods     poolPods
	reader   *bench.Reader
	seen     *seqLog
}

// poolRun is the running parts of one run.
type poolRun struct {
	c       *framework.Cluster
	cfg     poolConfig
	admin   kubernetes.Interface
	members []*poolMember
	churn   *poolChurn
	// baseWatches is the cloud's open watches by resource before any
	// member started.
	baseWatches map[string]int
	leader      *poolMember
}

// runPool measures a site of cfg.Members nodes against one cloud through
// counting links: each member on its own (no pool), then pooled, then
// the pool's leader killed during the EndpointSlice churn.
func runPool(t testing.TB, cfg poolConfig) *poolResults {
	res := &poolResults{cfg: cfg, machine: bench.ReadMachine()}
	c := framework.New(t, framework.Options{NodeCredentials: true, AuditLog: true,
		Namespaces: []string{poolBenchNS, bench.HeldNamespace},
		CloudArgs:  []string{"--service-cluster-ip-range", bench.HeldServiceCIDR}})
	signer := c.StartServingSigner(time.Hour)
	p := &poolRun{c: c, cfg: cfg}
	for i := range cfg.Members {
		signer.AlsoFor(poolMemberName(i))
	}
	res.reached, res.stopped = bench.RunSteps(t, "pool", []bench.Step{
		{Name: "data set", Run: func(ctx context.Context) error { return p.seed(ctx, t) }},
		{Name: "members unpooled", Run: func(ctx context.Context) error { return p.unpooled(ctx, t, res) }},
		{Name: "members pooled", Run: func(ctx context.Context) error { return p.pooled(ctx, t, res) }},
		{Name: "election request size", Run: func(ctx context.Context) error { return p.electionSize(ctx, t, res) }},
		{Name: "leader killed", Run: func(ctx context.Context) error { return p.failover(ctx, res) }},
	})
	p.stopReaders()
	if p.churn != nil {
		p.churn.stop()
	}
	res.machine.LoadEnd = bench.LoadAverage()
	return res
}

// seed creates the RBAC, the members' nodes and pods, the services and
// EndpointSlices, each member's counting link and daemon (not started),
// and reads the cloud's watches before any member.
func (p *poolRun) seed(ctx context.Context, t testing.TB) error {
	var err error
	if p.admin, err = bench.AdminClient(p.c); err != nil {
		return err
	}
	if err := createPoolRBAC(ctx, p.admin); err != nil {
		return err
	}
	u, err := url.Parse(p.c.CloudURL)
	if err != nil {
		return fmt.Errorf("cloud URL: %w", err)
	}
	for i := range p.cfg.Members {
		name, ip := poolMemberName(i), "127.0.0."+strconv.Itoa(i+2)
		pods, err := createPoolNode(ctx, p.admin, name, ip)
		if err != nil {
			return err
		}
		m := &poolMember{node: p.c.AddNode(name), link: startCountingLink(t, u.Host), pods: pods, seen: newSeqLog()}
		m.node.RouteCloud(m.link.url())
		port, err := framework.FreePort()
		if err != nil {
			return err
		}
		m.poolAddr = fmt.Sprintf("%s:%d", ip, port)
		p.members = append(p.members, m)
	}
	if err := bench.SeedServices(ctx, p.admin, p.cfg.Services); err != nil {
		return err
	}
	p.baseWatches, err = bench.OpenWatchesByResource(ctx, p.c)
	return err
}

// startMembers starts every member's daemon and waits until each is
// ready.
func (p *poolRun) startMembers() error {
	for _, m := range p.members {
		m.node.Start()
	}
	for _, m := range p.members {
		if err := m.node.WaitReady(poolStart); err != nil {
			return err
		}
	}
	return nil
}

// startReader starts m's reader of services and EndpointSlices at its
// door on its kube-proxy pod's token.
func (p *poolRun) startReader(ctx context.Context, m *poolMember) error {
	base, err := m.node.TokenConfig(m.pods.proxyToken)
	if err != nil {
		return err
	}
	m.reader, err = bench.StartReader(ctx, bench.ReaderConfig(base, m.pods.proxyToken), m.node.Name, m.seen.record)
	return err
}

// stopReaders stops every member's reader.
func (p *poolRun) stopReaders() {
	for _, m := range p.members {
		if m.reader != nil {
			m.reader.Cancel()
			m.reader = nil
		}
	}
}

// unpooled starts every member without a pool, each with its reader, and
// counts a window with the churn on.
func (p *poolRun) unpooled(ctx context.Context, t testing.TB, res *poolResults) error {
	if err := p.startMembers(); err != nil {
		return err
	}
	for _, m := range p.members {
		if err := p.startReader(ctx, m); err != nil {
			return err
		}
	}
	p.churn = startPoolChurn(ctx, p.admin, p.cfg.Services, p.cfg.UpdatesPerSec)
	time.Sleep(p.cfg.Settle)
	var err error
	res.unpooled, err = p.window(ctx, t)
	return err
}

// pooled restarts every member in the pool, waits for a leader, starts
// its reader and then the followers', until every follower reads
// EndpointSlices from the leader, and counts a window.
func (p *poolRun) pooled(ctx context.Context, t testing.TB, res *poolResults) error {
	p.stopReaders()
	for _, m := range p.members {
		m.node.Kill()
		m.node.AddArgs("--pool", poolBenchName, "--pool-listen-address", m.poolAddr)
	}
	if err := p.startMembers(); err != nil {
		return err
	}
	leader, err := p.waitLeader(ctx, nil)
	if err != nil {
		return err
	}
	p.leader, res.leader = leader, leader.node.Name
	if err := p.startReader(ctx, leader); err != nil {
		return err
	}
	if err := waitMetric(ctx, leader.node, holdingSyncLine(), poolStart); err != nil {
		return err
	}
	for _, m := range p.followers() {
		if err := p.startReader(ctx, m); err != nil {
			return err
		}
	}
	for _, m := range p.followers() {
		if err := waitMetric(ctx, m.node, upstreamLine(leader.node.Name), poolStart); err != nil {
			return err
		}
	}
	time.Sleep(p.cfg.Settle)
	res.pooled, err = p.window(ctx, t)
	return err
}

// followers are the members other than the leader.
func (p *poolRun) followers() []*poolMember { return p.othersThan(p.leader) }

// othersThan are the members but those given.
func (p *poolRun) othersThan(but ...*poolMember) []*poolMember {
	var out []*poolMember
	for _, m := range p.members {
		if !slices.Contains(but, m) {
			out = append(out, m)
		}
	}
	return out
}
