package operations

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/holding/forpods"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// HoldingStatus is one namespaced holding's line of a Status: the
// holding's report and its freshness.
type HoldingStatus struct {
	forpods.NamespacedHolding
	StalenessSeconds *float64 `json:"stalenessSeconds,omitempty"`
}

// ObserveNamespaced shows ns in the metrics, readiness and status; nil
// shows none. Called before serving.
func (o *View) ObserveNamespaced(ns *forpods.Namespaced) {
	if ns == nil {
		return
	}
	o.namespaced = ns
	o.metrics.MustRegister(ns.Collector())
}

// namespacedStatus reports each namespaced holding with its staleness
// (its metrics label is its key).
func (o *View) namespacedStatus() []HoldingStatus {
	if o.namespaced == nil {
		return nil
	}
	var out []HoldingStatus
	for _, h := range o.namespaced.Report() {
		hs := HoldingStatus{NamespacedHolding: h}
		if age, ok := o.metrics.Staleness(h.Key); ok && h.Held {
			s := age.Seconds()
			hs.StalenessSeconds = &s
		}
		out = append(out, hs)
	}
	return out
}

// namespacedChecks are the /readyz lines of the namespaced holdings: notes,
// which never fail readiness (a holding not synced is read through the
// cloud).
func (o *View) namespacedChecks() []check {
	var out []check
	for _, h := range o.namespacedStatus() {
		out = append(out, check{name: "held-in-namespace:" + h.Namespace + "/" + h.Resource, note: true, info: holdingLine(h)})
	}
	return out
}

// holdingLine says whom h is held for, on whose token, and how fresh.
func holdingLine(h HoldingStatus) string {
	who := strings.Join(h.ServiceAccounts, ", ")
	switch {
	case h.Held && h.StalenessSeconds != nil:
		return fmt.Sprintf("scope namespace, held for %s, syncing as pod %s, %d objects, heard from the cloud %s ago",
			who, h.SyncIdentity, h.Objects, (time.Duration(*h.StalenessSeconds) * time.Second).String())
	case h.Held:
		return fmt.Sprintf("scope namespace, held for %s, syncing as pod %s, %d objects, not heard from the cloud yet",
			who, h.SyncIdentity, h.Objects)
	case h.Stopped != "":
		return "scope namespace, stopped (" + h.Stopped + "): read through the cloud, its data dropped soon"
	}
	return "scope namespace, not synced: read through the cloud"
}

// addStoredNamespaced reports, for each namespaced holding in doc, its
// stored owners.
func addStoredNamespaced(ctx context.Context, path string, doc *Status) error {
	var keys []string
	for _, r := range doc.Resources {
		if k := forpods.NamespacedOwnersKey(r.Key); k != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	rep, err := metastore.Inspect(ctx, path, keys...)
	if err != nil {
		return err
	}
	for _, r := range doc.Resources {
		if h, ok := forpods.StoredNamespacedHolding(r.Key, rep.Meta[forpods.NamespacedOwnersKey(r.Key)]); ok {
			h.Objects = r.Objects
			doc.Holdings = append(doc.Holdings, HoldingStatus{NamespacedHolding: h})
		}
	}
	return nil
}

// renderNamespaced lists the namespaced holdings after the resource
// tables; nothing when there are none.
func renderNamespaced(out io.Writer, doc Status) error {
	if len(doc.Holdings) == 0 {
		return nil
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HELD IN NAMESPACE\tRESOURCE\tHELD\tOBJECTS\tSYNC IDENTITY\tSTALENESS\tSERVICE ACCOUNTS")
	for _, h := range doc.Holdings {
		held, id := strconv.FormatBool(h.Held), h.SyncIdentity
		if doc.Source == SourceDataDir {
			held = "-"
		}
		if id == "" {
			id = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", h.Namespace, h.Resource, held, h.Objects, id,
			staleness(h.StalenessSeconds), strings.Join(h.ServiceAccounts, ","))
	}
	return tw.Flush()
}
