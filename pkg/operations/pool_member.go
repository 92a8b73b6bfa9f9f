package operations

import (
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/pool"
)

// ObservePoolMember shows the node's pool membership: e's and stats's
// metrics, the upstreams in the status (ObservePool), and a /readyz
// line per resource of res held for pods (its upstream and bytes);
// nothing without a pool (e nil). Called before serving.
func (o *View) ObservePoolMember(e *pool.Elector, stats *pool.Stats, res []cloudsync.Resource) {
	if e == nil {
		return
	}
	o.Metrics().Registry().MustRegister(pool.Collector(e, stats))
	o.ObservePool(func(key string) (string, map[string]int64, bool) {
		st, ok := stats.Snapshot()[key]
		return st.Upstream, st.Bytes, ok
	})
	for _, r := range res {
		if !r.ForPods {
			continue
		}
		key := r.Key()
		o.AddNote(func() (string, string, bool) {
			info, ok := stats.Describe(key)
			return "pool:" + key, info, ok
		})
	}
}
