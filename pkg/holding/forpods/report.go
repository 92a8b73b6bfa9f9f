package forpods

import "sort"

// Holding is one resource's state, for status and metrics.
type Holding struct {
	Resource string `json:"resource"` // the resource's key
	// Held is true while the resource is synced for its owners.
	Held bool `json:"held"`
	// ServiceAccounts are the owners' service accounts, namespace/name.
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`
	// Pods are the owners, namespace/name.
	Pods []string `json:"pods,omitempty"`
}

// Report lists every resource that may be held, by key.
func (m *Holdings) Report() []Holding {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Holding, 0, len(m.byGVR))
	for _, h := range m.byGVR {
		r := Holding{Resource: h.Resource.Key(), Held: h.run != nil, ServiceAccounts: serviceAccountsLocked(h)}
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
