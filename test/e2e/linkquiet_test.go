//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// staleStateOutage is how long the link drops packets before it
	// returns with the state of every open connection lost.
	staleStateOutage = 10 * time.Second
	// staleStateRecoveryBound is the contract's catch-up after such a
	// link returns: within 10 s.
	staleStateRecoveryBound = 10 * time.Second
	// quietSettle lets the start's requests (discovery, lists, the
	// version) finish before the steady state is counted.
	quietSettle = 10 * time.Second
	// quietWindow is the steady state counted.
	quietWindow = time.Minute
	// maxQuietRequests is the contract's steady-state cost per node other
	// than the watches themselves: at most 1 request a minute.
	maxQuietRequests = 1
)

// TestSteadyStateCloudRequests counts, in the cloud's audit log, the
// requests a synced edge sends in a quiet minute: the watches stay open
// and nothing polls the cloud.
func TestSteadyStateCloudRequests(t *testing.T) {
	const ns = "quiet"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}, EdgeLink: true, AuditLog: true})
	c.StartEdge()
	createDurConfigMap(t.Context(), t, c.Admin.CoreV1().ConfigMaps(ns), "before", "0")
	mustCatchUp(t, c, ns, edgeSyncTimeout)
	time.Sleep(quietSettle)

	start := time.Now()
	time.Sleep(quietWindow) // the window's length is the measurement
	var other []string
	watches := 0
	edge := func(user string) bool { return user == c.EdgeUser() }
	for _, e := range c.CloudRequests(edge, start, start.Add(quietWindow)) {
		if e.Verb == "watch" {
			watches++
			continue
		}
		other = append(other, e.Verb+" "+e.RequestURI)
	}
	t.Logf("steady state over %s: %d requests other than watches, %d watches opened", quietWindow, len(other), watches)
	if len(other) > maxQuietRequests {
		t.Errorf("requests other than watches in %s of steady state: got %d, want at most %d:\n%s",
			quietWindow, len(other), maxQuietRequests, strings.Join(other, "\n"))
	}
}

// TestLinkStaleStateRecovery black-holes the link for 10 s, changes the
// cloud meanwhile, then lets new connections through while every open
// one stays silent for good, as a NAT that dropped its state does: the
// edge must close the dead connections, dial new ones and catch up within
// 10 s of the network's return.
func TestLinkStaleStateRecovery(t *testing.T) {
	const ns = "stale"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}, EdgeLink: true})
	c.StartEdge()
	createDurConfigMap(t.Context(), t, c.Admin.CoreV1().ConfigMaps(ns), "before", "0")
	mustCatchUp(t, c, ns, edgeSyncTimeout)
	for i := range 2 { // the second round runs on the connections the first dialled
		waitCloudLink(t, c, "connected")
		start := time.Now()
		c.BlackHoleLink()
		changeSyncedKinds(t, c, ns, fmt.Sprint("stale", i))
		time.Sleep(time.Until(start.Add(staleStateOutage))) // the outage's length is the scenario
		c.DropLinkState()
		recovery := mustCatchUp(t, c, ns, staleStateRecoveryBound)
		t.Logf("stale state: outage %s, caught up %s after the network returned",
			staleStateOutage, recovery.Round(time.Millisecond))
	}
}
