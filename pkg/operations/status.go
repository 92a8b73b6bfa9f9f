package operations

import (
	"encoding/json"
	"net/http"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/metrics"
)

// Status is what `apiserver-lite status` and `inspect` report.
type Status struct {
	// Source is "daemon" (asked over the loopback door) or "data-dir"
	// (read from a stopped daemon's store).
	Source          string           `json:"source"`
	Node            string           `json:"node,omitempty"`
	Link            string           `json:"link,omitempty"` // "up" or "down"; empty from a data dir
	SchemaVersion   int              `json:"schemaVersion,omitempty"`
	Integrity       string           `json:"integrity,omitempty"`
	LastCommitError string           `json:"lastCommitError,omitempty"`
	Resources       []ResourceStatus `json:"resources"`
	// Holdings are the resources held in a namespace for its pods.
	Holdings []HoldingStatus `json:"namespacedHoldings,omitempty"`
	// Stored counts the answers kept for outages, by kind; read from a
	// data dir only.
	Stored []StoredAnswers `json:"stored,omitempty"`
}

// StoredAnswers is how many answers of one kind a data dir holds.
type StoredAnswers struct {
	Kind   string `json:"kind"`
	Prefix string `json:"prefix"`
	Count  int    `json:"count"`
	Bytes  int64  `json:"bytes"`
}

// ResourceStatus is one resource's line of a Status.
type ResourceStatus struct {
	Resource         string               `json:"resource"`
	Key              string               `json:"key"`
	ResourceVersion  uint64               `json:"resourceVersion"`
	Ready            bool                 `json:"ready"`
	Objects          int                  `json:"objects"`
	Watchers         int                  `json:"watchers"`
	TooSlowWatchers  uint64               `json:"tooSlowWatchers"`
	StalenessSeconds *float64             `json:"stalenessSeconds,omitempty"`
	LastError        *metrics.ErrorRecord `json:"lastError,omitempty"`
	// ForPods marks a resource held only while pods on the node read it
	// on their own identities; HeldFor names their service accounts.
	ForPods bool     `json:"forPods,omitempty"`
	HeldFor []string `json:"heldFor,omitempty"`
	// Scope is where a resource held for pods is held ("cluster");
	// Owners are its owner pods (namespace/name); SyncIdentity is the
	// owner whose token its sync runs on, empty while none does.
	Scope        string   `json:"scope,omitempty"`
	Owners       []string `json:"owners,omitempty"`
	SyncIdentity string   `json:"syncIdentity,omitempty"`
	// Upstream is where a pool member reads the resource now (cloud, or
	// pool:<leader>), UpstreamBytes the bytes read from each; empty
	// without a pool.
	Upstream      string           `json:"upstream,omitempty"`
	UpstreamBytes map[string]int64 `json:"upstreamBytes,omitempty"`
}

// status builds the running daemon's Status.
func (o *View) status() Status {
	doc := Status{Source: "daemon", Node: o.node, Link: "down", Resources: []ResourceStatus{}}
	if o.link() {
		doc.Link = "up"
	}
	if err, _ := o.metrics.CommitState(); err != nil {
		doc.LastCommitError = err.Error()
	}
	held := o.holdingsByKey()
	for i, c := range o.caches {
		st := c.Stats()
		label := o.labels[i]
		rs := ResourceStatus{Resource: label, Key: o.res[i].Key(), ResourceVersion: st.RV, Ready: st.Ready,
			Objects: st.Objects, Watchers: st.Watchers, TooSlowWatchers: st.TooSlow}
		if st.Ready || !o.res[i].ForPods { // one not held has nothing to be stale
			age, _ := o.metrics.Staleness(label)
			s := age.Seconds()
			rs.StalenessSeconds = &s
		}
		if e, ok := o.metrics.LastError(label); ok {
			rs.LastError = &e
		}
		if h, ok := held[o.res[i].Key()]; ok && o.res[i].ForPods {
			rs.ForPods, rs.HeldFor, rs.Scope, rs.Owners, rs.SyncIdentity = true, h.ServiceAccounts, h.Scope, h.Pods, h.SyncIdentity
		}
		o.poolStatus(&rs)
		doc.Resources = append(doc.Resources, rs)
	}
	doc.Holdings = o.namespacedStatus()
	return doc
}

func (o *View) serveStatus(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, o.status())
}

// writeJSON writes v as an indented JSON document.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
