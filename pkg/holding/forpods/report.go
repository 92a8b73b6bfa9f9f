package forpods

import (
	"encoding/json"
	"sort"
)

// Holding is one resource's state, for status and metrics.
type Holding struct {
	Resource string `json:"resource"` // the resource's key
	// Held is true while the resource is synced for its owners.
	Held bool `json:"held"`
	// ServiceAccounts are the owners' service accounts, namespace/name.
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`
	// Pods are the owners, namespace/name.
	Pods []string `json:"pods,omitempty"`
	// Scope is where the resource is held: ScopeCluster.
	Scope string `json:"scope"`
	// SyncIdentity is the owner whose token the sync runs on, as
	// "namespace/serviceaccount (pod namespace/name)"; empty while none
	// does (not held, starting, or no owner the cloud accepts).
	SyncIdentity string `json:"syncIdentity,omitempty"`
	// Widens is set for the whole copy of a resource the node's scope
	// syncs in part.
	Widens bool `json:"widens,omitempty"`
}

// ScopeCluster is the scope of a holding of a whole resource, across all
// namespaces.
const ScopeCluster = "cluster"

// Report lists every resource that may be held, by key.
func (m *Holdings) Report() []Holding {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Holding, 0, len(m.byGVR))
	for _, h := range m.byGVR {
		r := Holding{Resource: h.Resource.Key(), Held: h.run != nil, ServiceAccounts: serviceAccountsLocked(h),
			Scope: ScopeCluster, Widens: h.Widens}
		if p := h.identity; h.run != nil && h.identityToken != "" {
			r.SyncIdentity = p.Namespace + "/" + p.ServiceAccount + " (pod " + p.Namespace + "/" + p.Name + ")"
		}
		for _, p := range h.owners {
			r.Pods = append(r.Pods, p.Namespace+"/"+p.Name)
		}
		sort.Strings(r.Pods)
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}

// running counts the holdings running.
func (m *Holdings) running() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runningLocked()
}

// StoredPods names the pods of stored owners (namespace/name, sorted);
// nil for a value that does not parse.
func StoredPods(value []byte) []string {
	var s storedOwners
	if json.Unmarshal(value, &s) != nil {
		return nil
	}
	var out []string
	for _, p := range s.Owners {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	sort.Strings(out)
	return out
}
