package operations

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Upstreams tells, for a resource key, the upstream a pool member reads
// it from now (cloud, or pool:<leader>) and the bytes read from each;
// ok false for a resource never read or without a pool.
type Upstreams func(key string) (upstream string, bytes map[string]int64, ok bool)

// ObservePool shows the pool's upstreams in the status. Called before
// serving.
func (o *View) ObservePool(u Upstreams) { o.upstreams = u }

// poolStatus fills rs's upstream, if the pool reads it.
func (o *View) poolStatus(rs *ResourceStatus) {
	if o.upstreams == nil {
		return
	}
	if up, bytes, ok := o.upstreams(rs.Key); ok {
		rs.Upstream, rs.UpstreamBytes = up, bytes
	}
}

// renderPool lists each pool-read resource's upstream and bytes after the
// holdings; nothing without a pool.
func renderPool(out io.Writer, doc Status) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	header := false
	for _, r := range doc.Resources {
		if r.Upstream == "" {
			continue
		}
		if !header {
			fmt.Fprintln(out)
			fmt.Fprintln(tw, "POOL\tUPSTREAM\tBYTES")
			header = true
		}
		ups := slices.Sorted(func(yield func(string) bool) {
			for up := range r.UpstreamBytes {
				if !yield(up) {
					return
				}
			}
		})
		parts := make([]string, 0, len(ups))
		for _, up := range ups {
			parts = append(parts, fmt.Sprintf("%s=%d", up, r.UpstreamBytes[up]))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Resource, r.Upstream, dash(strings.Join(parts, " ")))
	}
	return tw.Flush()
}
