package readcache

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

type memStore struct {
	mu sync.Mutex
	m  map[string][]byte // guarded by mu
}

func (s *memStore) Put(_ context.Context, k string, v []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
	return nil
}

func (s *memStore) Lookup(_ context.Context, k string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	return v, ok, nil
}

func (s *memStore) Delete(_ context.Context, k string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, k)
	return nil
}

const pvcPath = "/api/v1/namespaces/ns/persistentvolumeclaims/data"

func TestGetOnlyKindsServedOffline(t *testing.T) {
	online, status := true, http.StatusOK
	cloud := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !online {
			http.Error(w, "offline", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"kind":"PersistentVolumeClaim","metadata":{"name":"data"}}`))
	})
	h := Wrap(cloud, Config{Store: &memStore{m: map[string][]byte{}}, Connected: func() bool { return online }})
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	steps := []struct {
		name     string
		online   bool
		status   int
		path     string
		wantCode int
	}{
		{"online read is stored", true, http.StatusOK, pvcPath, http.StatusOK},
		{"offline read is replayed", false, 0, pvcPath, http.StatusOK},
		{"other kind is not stored", true, http.StatusOK, "/api/v1/namespaces/ns/secrets/s", http.StatusOK},
		{"other kind offline", false, 0, "/api/v1/namespaces/ns/secrets/s", http.StatusServiceUnavailable},
		{"the cloud forbids it now", true, http.StatusForbidden, pvcPath, http.StatusForbidden},
		{"forbidden copy is gone offline", false, 0, pvcPath, http.StatusServiceUnavailable},
		{"lease stored", true, http.StatusOK, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", http.StatusOK},
		{"lease offline", false, 0, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", http.StatusOK},
	}
	for _, st := range steps {
		online, status = st.online, st.status
		if code, body := get(st.path); code != st.wantCode {
			t.Errorf("%s: got %d %s, want %d", st.name, code, body, st.wantCode)
		}
	}
}
