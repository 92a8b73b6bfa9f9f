//go:build e2e

package pool

import (
	"bytes"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"maps"
	"slices"
	"strings"
	"time"
)

// Goals of the issue, reported with their verdicts.
const (
	// goalPoolCut is the least share of cloud-link bytes and of cloud
	// watches a pool saves against the same members unpooled, from
	// goalPoolMembers members on.
	goalPoolCut     = 0.90
	goalPoolMembers = 10
	// goalPoolFailover bounds how long after the leader is killed every
	// follower receives updates again.
	goalPoolFailover = 10 * time.Second
	// goalPoolLists is the LISTs the followers may make at the cloud when
	// the leader dies.
	goalPoolLists = 0
)

// perNodeResources are what every member watches at the cloud for itself,
// pooled or not (docs/pool.md, "What never goes through a peer"): its own
// pods and Node, the configmaps and secrets its pods reference. No member
// of the run holds all Nodes (the readers do not read Nodes), so every
// nodes watch is a member's own Node's.
var perNodeResources = map[string]bool{"pods": true, "nodes": true, "configmaps": true, "secrets": true}

// poolWideWatches is the open watches of resources a pool shares.
func (s poolSide) poolWideWatches() int {
	n := 0
	for r, v := range s.watches {
		if !perNodeResources[r] {
			n += v
		}
	}
	return n
}

// otherRequests is the members' requests other than the election's.
func (s poolSide) otherRequests() int {
	n := 0
	for _, v := range s.requests {
		n += v
	}
	return n
}

// poolResults is everything one pool run measured.
type poolResults struct {
	cfg      poolConfig
	machine  bench.Machine
	unpooled poolSide
	pooled   poolSide
	// electionRequestBytes is one election request's bytes on the link,
	// both ways.
	electionRequestBytes float64
	leader, newLeader    string
	// failover is the longest any follower went from the leader's kill to
	// seeing an update written after it; notRecovered are the followers
	// that saw none.
	failover     time.Duration
	notRecovered []string
	// rejoined is from the kill until every follower read EndpointSlices
	// from the new leader.
	rejoined time.Duration
	// missed is the updates written after the kill that a follower's
	// reader never saw, summed over followers.
	missed int
	// followerLists are the followers' cloud LISTs after the kill.
	followerLists []string
	reached       []string
	stopped       error
}

// cut is the share of was that now saves.
func cut(was, now float64) float64 {
	if was <= 0 {
		return 0
	}
	return 1 - now/was
}

// poolVerdict is one goal and whether the run met it.
type poolVerdict struct {
	goal, figures string
	met           bool
}

// verdicts returns, for each goal of the issue, whether the run met it.
func (r *poolResults) verdicts() []poolVerdict {
	var out []poolVerdict
	u, p := r.unpooled, r.pooled
	if r.cfg.Members >= goalPoolMembers {
		bc := cut(u.bytesPerUpdate(), p.bytesPerUpdate())
		wc := cut(float64(u.poolWideWatches()), float64(p.poolWideWatches()))
		out = append(out,
			poolVerdict{fmt.Sprintf("at least %.0f%% fewer cloud-link bytes per EndpointSlice update written, election included", goalPoolCut*100),
				fmt.Sprintf("%.1f%% (%.2f against %.2f KiB; a minute %.0f against %.0f KiB)", bc*100,
					p.bytesPerUpdate()/1024, u.bytesPerUpdate()/1024, p.bytesPerMin()/1024, u.bytesPerMin()/1024),
				u.bytesPerUpdate() > 0 && p.updates > 0 && bc >= goalPoolCut},
			poolVerdict{fmt.Sprintf("at least %.0f%% fewer open cloud watches of pool-wide resources (every member keeps its own pods, Node, configmaps and secrets)", goalPoolCut*100),
				fmt.Sprintf("%.1f%% (%d against %d; all watches %d against %d)", wc*100, p.poolWideWatches(), u.poolWideWatches(), p.openWatches(), u.openWatches()),
				u.poolWideWatches() > 0 && wc >= goalPoolCut})
	}
	recovered := len(r.notRecovered) == 0 && r.failover > 0
	out = append(out,
		poolVerdict{fmt.Sprintf("every follower receives updates again within %s of the leader's kill", goalPoolFailover),
			fmt.Sprintf("%s, %d followers saw none", r.failover.Round(time.Millisecond), len(r.notRecovered)),
			recovered && r.failover <= goalPoolFailover},
		poolVerdict{"no update missed by a follower across the kill", fmt.Sprintf("%d missed", r.missed), r.missed == 0},
		poolVerdict{fmt.Sprintf("%d LISTs by the followers at the cloud after the kill", goalPoolLists),
			fmt.Sprintf("%d", len(r.followerLists)), r.stopped == nil && len(r.followerLists) <= goalPoolLists})
	return out
}

// check returns what makes the run's figures unsound: a step that did
// not finish or a figure missing.
func (r *poolResults) check() []error {
	var errs []error
	if r.stopped != nil {
		errs = append(errs, fmt.Errorf("the run stopped after %s: %w", strings.Join(r.reached, ", "), r.stopped))
	}
	for _, s := range []struct {
		name string
		side poolSide
	}{{"unpooled", r.unpooled}, {"pooled", r.pooled}} {
		if s.side.link.total() <= 0 || s.side.openWatches() <= 0 || s.side.updates <= 0 {
			errs = append(errs, fmt.Errorf("%s: figure missing: %d link bytes, %d open watches, %d updates",
				s.name, s.side.link.total(), s.side.openWatches(), s.side.updates))
		}
	}
	if r.pooled.election <= 0 || r.electionRequestBytes <= 0 {
		errs = append(errs, fmt.Errorf("figure missing: %d election requests of %.0f bytes", r.pooled.election, r.electionRequestBytes))
	}
	return errs
}

// writeMarkdown writes the section of one pool size.
func (r *poolResults) writeMarkdown(b *bytes.Buffer) {
	fmt.Fprintf(b, "## A pool of %d\n\n", r.cfg.Members)
	fmt.Fprintf(b, "Load average %s at the start, %s at the end. Leader %s; after the kill, %s, every follower reading from it %s after the kill.\n\n",
		r.machine.LoadStart, r.machine.LoadEnd, r.leader, r.newLeader, r.rejoined.Round(time.Second))
	if r.stopped != nil {
		fmt.Fprintf(b, "**The run stopped** after %s: %v\n\n", strings.Join(r.reached, ", "), r.stopped)
	}
	r.writeLinkRows(b)
	r.writeWatchRows(b)
	b.WriteString("| goal | verdict |\n| --- | --- |\n")
	for _, v := range r.verdicts() {
		fmt.Fprintf(b, "| %s | %s (%s) |\n", v.goal, bench.Verdict(v.met), v.figures)
	}
	b.WriteString("\n")
	for _, l := range r.followerLists {
		fmt.Fprintf(b, "- follower LIST after the kill: `%s`\n", l)
	}
	if len(r.followerLists) > 0 {
		b.WriteString("\n")
	}
}

// writeLinkRows writes the sites' bytes and requests per minute.
func (r *poolResults) writeLinkRows(b *bytes.Buffer) {
	c, u, p := r.cfg, r.unpooled, r.pooled
	b.WriteString("| per minute, whole site | unpooled | pooled |\n| --- | --- | --- |\n")
	fmt.Fprintf(b, "| cloud-link bytes, both ways (to the cloud + from it) | %.0f KiB (%.0f + %.0f) | %.0f KiB (%.0f + %.0f) |\n",
		u.bytesPerMin()/1024, perMinKiB(u.link.up, u.window), perMinKiB(u.link.down, u.window),
		p.bytesPerMin()/1024, perMinKiB(p.link.up, p.window), perMinKiB(p.link.down, p.window))
	fmt.Fprintf(b, "| of which the leader's link | | %.0f KiB |\n", perMinKiB(p.leader.total(), p.window))
	perNode := u.bytesPerMin() / float64(c.Members)
	if perNode > 0 {
		fmt.Fprintf(b, "| the site's link in unpooled members' worth (one unpooled member: %.0f KiB); the cut can be at most 1 − 1/%d = %.1f%% | %d | %.2f |\n",
			perNode/1024, c.Members, (1-1/float64(c.Members))*100, c.Members, p.bytesPerMin()/perNode)
	}
	fmt.Fprintf(b, "| election requests (audit log), their bytes (%.0f B a request, measured on the link) | %.1f | %.1f, %.1f KiB |\n",
		r.electionRequestBytes, u.electionPerMin(), p.electionPerMin(), p.electionPerMin()*r.electionRequestBytes/1024)
	fmt.Fprintf(b, "| EndpointSlice updates written | %.0f | %.0f |\n", float64(u.updates)/u.window.Minutes(), float64(p.updates)/p.window.Minutes())
	fmt.Fprintf(b, "| cloud-link bytes per EndpointSlice update written | %.2f KiB | %.2f KiB |\n", u.bytesPerUpdate()/1024, p.bytesPerUpdate()/1024)
	fmt.Fprintf(b, "| requests of the members' identities other than the election's | %.1f | %.1f |\n",
		float64(u.otherRequests())/u.window.Minutes(), float64(p.otherRequests())/p.window.Minutes())
	keys := map[string]bool{}
	for k := range maps.Keys(u.requests) {
		keys[k] = true
	}
	for k := range maps.Keys(p.requests) {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		fmt.Fprintf(b, "| `%s` requests of the members' identities | %.1f | %.1f |\n", k,
			float64(u.requests[k])/u.window.Minutes(), float64(p.requests[k])/p.window.Minutes())
	}
}

// writeWatchRows writes the sites' open cloud watches and connections at
// the windows' ends.
func (r *poolResults) writeWatchRows(b *bytes.Buffer) {
	u, p := r.unpooled, r.pooled
	b.WriteString("| **at the end of the window** | | |\n")
	fmt.Fprintf(b, "| open cloud watches (above the count without members) | %d | %d |\n", u.openWatches(), p.openWatches())
	fmt.Fprintf(b, "| of which of pool-wide resources | %d | %d |\n", u.poolWideWatches(), p.poolWideWatches())
	res := map[string]bool{}
	for k := range maps.Keys(u.watches) {
		res[k] = true
	}
	for k := range maps.Keys(p.watches) {
		res[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(res)) {
		fmt.Fprintf(b, "| open `%s` watches | %d | %d |\n", k, u.watches[k], p.watches[k])
	}
	fmt.Fprintf(b, "| TCP connections on the links | %d | %d |\n\n", u.link.open, p.link.open)
}

func perMinKiB(n int64, window time.Duration) float64 {
	if window <= 0 {
		return 0
	}
	return float64(n) / 1024 / window.Minutes()
}

// writePoolHeader writes what every size of the run shares.
func writePoolHeader(b *bytes.Buffer, m bench.Machine) {
	fmt.Fprintf(b, "Generated by `make bench-pool` on %s.\n\n", m.Date.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(b, "- Machine: %d CPUs (`nproc`), %s, %.1f GiB of memory; everything on this one machine, cloud included.\n",
		m.CPUs, m.Model, float64(m.Memory)/(1<<30))
	fmt.Fprintf(b, "- Each member: its own apiserver-lite on its node client certificate (Node,RBAC + NodeRestriction), its cloud link through a TCP proxy of its own in the benchmark that passes TLS through and counts the bytes of every connection each way, and a reader of services and EndpointSlices (client-go informers as kube-proxy runs them) at its door on a token bound to its kube-proxy pod, whose token volume names the pool audience.\n")
	fmt.Fprintf(b, "- The cloud: %d services and as many EndpointSlices, %d EndpointSlice updates a second through the whole run.\n",
		poolServices, poolUpdatesPerSec)
	fmt.Fprintf(b, "- Unpooled: the same members without `pool`; pooled: restarted with `pool`, once every follower reads EndpointSlices from the leader. Each counted over %s after %s of settling: bytes from the links, requests from the cloud's audit log by identity, open watches from the cloud's `/metrics`.\n",
		poolWindow, poolSettle)
	fmt.Fprintf(b, "- Then the leader is killed (SIGKILL) during the churn: failover is the longest any follower's reader went from the kill to seeing an update written after it; LISTs are the followers' identities' at the cloud from the kill until %s after every follower reads from the new leader; missed are the updates written after the kill (until %s before the count) that a follower's reader never saw.\n\n",
		poolSettle, poolSettle)
}
