//go:build e2e

package fleet

import (
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// watchPhases is the median, over the fleet's nodes, of the number of
// distinct seconds in which the watches a node had open at at were
// received (those received from since on). kube-apiserver sends each
// watch a bookmark about a minute after the second it started, then
// every minute from the second it was sent: watches that started in the
// same second get their bookmarks dispatched together, so this counts the
// moments a minute kube-apiserver sends a node's bookmarks. A watch that
// ended before at (a reflector's timeout) no longer counts; its
// successor does, from its own second.
func watchPhases(c *framework.Cluster, since, at time.Time) float64 {
	seconds := map[string]map[int64]bool{}
	for _, e := range c.OpenWatches(isFleetUser, since, at) {
		s := seconds[e.User.Username]
		if s == nil {
			s = map[int64]bool{}
			seconds[e.User.Username] = s
		}
		s[e.RequestReceived.Unix()] = true
	}
	counts := make([]float64, 0, len(seconds))
	for _, s := range seconds {
		counts = append(counts, float64(len(s)))
	}
	return bench.Median(counts)
}
