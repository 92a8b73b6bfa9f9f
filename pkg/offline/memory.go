package offline

import (
	"context"
	"strings"
	"sync"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// MemoryStore keeps answers in memory only, for a daemon without a state
// key: no token reaches the disk, and none survives a restart. It
// implements Store, PrefixDeleter and Pruner. Safe for concurrent use.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string][]byte // guarded by mu
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{m: map[string][]byte{}} }

// Put stores value under key.
func (s *MemoryStore) Put(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = value
	return nil
}

// Get returns the value under key.
func (s *MemoryStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok, nil
}

// Delete removes key.
func (s *MemoryStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

// MetaUsage counts the values under prefix and their bytes.
func (s *MemoryStore) MetaUsage(_ context.Context, prefix string) (metastore.MetaUsage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var u metastore.MetaUsage
	for k, v := range s.m {
		if strings.HasPrefix(k, prefix) {
			u.Count++
			u.Bytes += int64(len(v))
		}
	}
	return u, nil
}

// DeleteMetaPrefix removes every value whose key starts with prefix.
func (s *MemoryStore) DeleteMetaPrefix(_ context.Context, prefix string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.m {
		if strings.HasPrefix(k, prefix) {
			delete(s.m, k)
		}
	}
	return nil
}

// PruneMeta removes the values under prefix that dead reports.
func (s *MemoryStore) PruneMeta(_ context.Context, prefix string, dead func([]byte) bool) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, v := range s.m {
		if strings.HasPrefix(k, prefix) && dead(v) {
			delete(s.m, k)
			n++
		}
	}
	return n, nil
}
