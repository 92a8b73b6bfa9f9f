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
	o.metrics.Registry().MustRegister(h.Collector())
}

// HeldFor names the service accounts gvr is held for; nil when none.
func (o *View) HeldFor(gvr schema.GroupVersionResource) []string {
	if o.holdings == nil {
		return nil
	}
	return o.holdings.HeldFor(gvr)
}

// heldForPodsCheck describes a resource held for pods; it never fails:
// one not held is read through the cloud.
func (o *View) heldForPodsCheck(i int, ready bool) check {
	c := check{name: "held-for-pods:" + o.labels[i]}
	who := strings.Join(o.HeldFor(o.res[i].GVR), ", ")
	switch {
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
