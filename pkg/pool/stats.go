package pool

import (
	"maps"
	"sync"
)

// Stats are, per resource, the upstream it reads from now, the bytes read
// from each upstream and why the leader was left. Safe for concurrent use;
// a nil *Stats records nothing.
type Stats struct {
	mu sync.Mutex
	// upstream is each resource's current upstream. Guarded by mu.
	upstream map[string]string
	// bytes are the bytes read, by resource and upstream. Guarded by mu.
	bytes map[string]map[string]int64
	// fallbacks count the leader's refusals, by resource and reason.
	// Guarded by mu.
	fallbacks map[string]map[string]int64
}

// NewStats returns empty Stats.
func NewStats() *Stats {
	return &Stats{upstream: map[string]string{}, bytes: map[string]map[string]int64{},
		fallbacks: map[string]map[string]int64{}}
}

// ResourceStats is one resource's view.
type ResourceStats struct {
	Upstream  string
	Bytes     map[string]int64
	Fallbacks map[string]int64
}

func (s *Stats) use(resource, upstream string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.upstream[resource] = upstream
}

func (s *Stats) fallback(resource, reason string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	add(s.fallbacks, resource, reason, 1)
}

// AddBytes counts n bytes of resource read from upstream.
func (s *Stats) AddBytes(resource, upstream string, n int64) {
	if s == nil || n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	add(s.bytes, resource, upstream, n)
}

func add(m map[string]map[string]int64, k1, k2 string, n int64) {
	if m[k1] == nil {
		m[k1] = map[string]int64{}
	}
	m[k1][k2] += n
}

// Snapshot is every resource's view, by resource.
func (s *Stats) Snapshot() map[string]ResourceStats {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]ResourceStats{}
	for r, up := range s.upstream {
		out[r] = ResourceStats{Upstream: up, Bytes: maps.Clone(s.bytes[r]), Fallbacks: maps.Clone(s.fallbacks[r])}
	}
	return out
}
