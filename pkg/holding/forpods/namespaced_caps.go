package forpods

import (
	"fmt"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Caps bound what is held for pods. A holding that would cross one is not
// started, or stops: its reads go back to the cloud.
type Caps struct {
	// NamespaceObjects and NamespaceBytes bound all holdings of one
	// namespace together.
	NamespaceObjects int
	NamespaceBytes   int64
	// TotalBytes bounds all holdings for pods, cluster-wide ones
	// (ClusterBytes) included.
	TotalBytes int64
	// ClusterBytes is what the cluster-wide holdings hold; nil is none.
	ClusterBytes func() int64
}

// The caps a refusal names, as the metric labels them.
const (
	capObjects   = "namespace-max-objects"
	capBytes     = "namespace-max-bytes"
	capTotal     = "max-bytes"
	capResources = "max-resources"
)

// ErrOverCap means a holding would cross a cap.
var ErrOverCap = fmt.Errorf("a cap on what is held for pods would be crossed")

// capError is ErrOverCap naming the cap.
type capError struct{ cap string }

func (e *capError) Error() string { return fmt.Sprintf("%v: %s", ErrOverCap, e.cap) }
func (e *capError) Unwrap() error { return ErrOverCap }

// usage is what some holdings hold.
type usage struct {
	objects int
	bytes   int64
}

func (u *usage) add(st versioncache.Stats) {
	u.objects += st.Objects
	u.bytes += st.Bytes
}

// usageLocked sums the holdings of ns ("" for every namespace) other than
// except. m.mu must be held.
func (m *Namespaced) usageLocked(ns string, except *nsHolding) usage {
	var u usage
	for k, h := range m.byKey {
		if h != except && (ns == "" || k.ns == ns) {
			u.add(h.cache.Stats())
		}
	}
	return u
}

// overLocked names the cap that ns's holdings other than h, plus add,
// cross (or reach, when strict is false); "" for none. m.mu must be held.
func (m *Namespaced) overLocked(ns string, h *nsHolding, add usage, reach bool) string {
	inNS := m.usageLocked(ns, h)
	total := m.usageLocked("", h).bytes + add.bytes
	if m.cfg.Caps.ClusterBytes != nil {
		total += m.cfg.Caps.ClusterBytes()
	}
	over := func(have, limit int64) bool { return have > limit || (reach && have >= limit) }
	switch c := m.cfg.Caps; {
	case over(int64(inNS.objects+add.objects), int64(c.NamespaceObjects)):
		return capObjects
	case over(inNS.bytes+add.bytes, c.NamespaceBytes):
		return capBytes
	case over(total, c.TotalBytes):
		return capTotal
	}
	return ""
}

// atCapLocked names the cap ns is at without h; "" for none. m.mu must
// be held.
func (m *Namespaced) atCapLocked(ns string, h *nsHolding) string {
	return m.overLocked(ns, h, usage{}, true)
}

// AtTotalBytes reports whether every holding for pods together, the
// cluster-wide ones' bytes included, reaches the total cap; the
// cluster-wide holdings start none then.
func (m *Namespaced) AtTotalBytes() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	total := m.usageLocked("", nil).bytes
	if m.cfg.Caps.ClusterBytes != nil {
		total += m.cfg.Caps.ClusterBytes()
	}
	return total >= m.cfg.Caps.TotalBytes
}

// guard is h's Guard: the sync may commit what keeps every cap.
func (m *Namespaced) guard(h *nsHolding) Guard {
	return func(objects int, bytes int64) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		if c := m.overLocked(h.res.Namespace, h, usage{objects, bytes}, false); c != "" {
			return &capError{cap: c}
		}
		return nil
	}
}

// enforceCapsLocked stops the largest running holding of each namespace
// past a cap, as the cluster-wide holdings grow or a commit raced another.
// m.mu must be held.
func (m *Namespaced) enforceCapsLocked() {
	largest := map[string]*nsHolding{}
	size := map[*nsHolding]int64{}
	for k, h := range m.byKey {
		if h.run == nil {
			continue
		}
		size[h] = h.cache.Stats().Bytes
		if l := largest[k.ns]; l == nil || size[h] > size[l] {
			largest[k.ns] = h
		}
	}
	for ns, h := range largest {
		if c := m.overLocked(ns, nil, usage{}, false); c != "" {
			m.refuseLocked(h, c)
		}
	}
}

// LimitTotalBytes makes m start no holding while at reports that all
// holdings for pods hold pod-identity-max-bytes. Call it before Run.
func (m *Holdings) LimitTotalBytes(at func() bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cfg.AtTotalBytes = at
}
