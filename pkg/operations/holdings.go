package operations

import (
	"strings"

	"github.com/apiserver-lite/apiserver-lite/pkg/holding/forpods"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ObserveHoldings shows h in the metrics, health and status; nil shows
// none. Called before serving.
func (o *View) ObserveHoldings(h *forpods.Holdings) {
	if h == nil {
		return
	}
	o.holdings = h
	o.metrics.MustRegister(h.Collector())
}

// HeldFor names the service accounts gvr is held for; nil when none.
func (o *View) HeldFor(gvr schema.GroupVersionResource) []string {
	if o.holdings == nil {
		return nil
	}
	return o.holdings.HeldFor(gvr)
}

// holdingsByKey is the holdings' report by resource key; empty without
// holdings.
func (o *View) holdingsByKey() map[string]forpods.Holding {
	out := map[string]forpods.Holding{}
	if o.holdings == nil {
		return out
	}
	for _, h := range o.holdings.Report() {
		out[h.Resource] = h
	}
	return out
}

// heldForPodsCheck describes a resource held for pods: where, for whom
// and on whose token; it never fails: one not held is read through the
// cloud. Its freshness is its staleness line.
func (o *View) heldForPodsCheck(i int, ready bool, held map[string]forpods.Holding) check {
	c := check{name: "held-for-pods:" + o.labels[i]}
	h := held[o.res[i].Key()]
	who := strings.Join(h.ServiceAccounts, ", ")
	switch {
	case ready && who != "" && h.SyncIdentity != "":
		c.info = "held for " + who + " (scope " + h.Scope + "), synced as " + h.SyncIdentity
	case ready && who != "" && h.Held:
		c.info = "held for " + who + " (scope " + h.Scope + "), no owner syncs it now: read through the cloud while it is reachable"
	case ready && who != "":
		c.info = "held for " + who
	case ready:
		c.info = "held; its last reader left, dropping soon"
	case who != "":
		c.info = "starting for " + who + " (read through the cloud)"
	default:
		c.info = "not held (read through the cloud)"
	}
	return c
}
