package cloudsync

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/version"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// fakeVersion is the cloud's /version at the network edge: it answers
// with the queued results in order, then repeats the last one.
type fakeVersion struct {
	mu      sync.Mutex
	results []versionResult // guarded by mu
	calls   int             // guarded by mu
}

type versionResult struct {
	info *version.Info
	err  error
}

func (f *fakeVersion) ServerVersion() (*version.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.results[min(f.calls, len(f.results)-1)]
	f.calls++
	return r.info, r.err
}

func mustStore(t *testing.T, path string) *metastore.Store {
	t.Helper()
	st, err := metastore.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

var (
	v1363 = version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.3", Platform: "linux/amd64"}
	v1364 = version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.4", Platform: "linux/amd64"}
)

// A fetched version is served at once and survives a restart with the
// cloud unreachable; a later change replaces it.
func TestVersionKeeperPersists(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	st := mustStore(t, path)
	cloud := &fakeVersion{results: []versionResult{{info: &v1363}, {info: &v1364}}}
	k := NewVersionKeeper(VersionConfig{Fetcher: cloud, Store: st})
	if err := k.Load(ctx); err != nil {
		t.Fatalf("Load on an empty store: %v", err)
	}
	if _, ok := k.Version(); ok {
		t.Fatalf("got a version before any fetch, want none")
	}
	if err := k.Refresh(ctx); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if got, ok := k.Version(); !ok || got != v1363 {
		t.Errorf("got %+v %v after fetch, want %+v", got, ok, v1363)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	st = mustStore(t, path)
	down := &fakeVersion{results: []versionResult{{err: errors.New("connection refused")}}}
	restarted := NewVersionKeeper(VersionConfig{Fetcher: down, Store: st})
	if err := restarted.Load(ctx); err != nil {
		t.Fatalf("Load: %v", err)
	}
	if err := restarted.Refresh(ctx); err == nil {
		t.Errorf("Refresh with the cloud down: got nil error, want one")
	}
	if got, ok := restarted.Version(); !ok || got != v1363 {
		t.Errorf("got %+v %v after restart, want the stored %+v", got, ok, v1363)
	}
	restarted.cfg.Fetcher = cloud
	if err := restarted.Refresh(ctx); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if got, _ := restarted.Version(); got != v1364 {
		t.Errorf("got %+v after the cloud upgraded, want %+v", got, v1364)
	}
}

// Run retries with backoff until the cloud answers.
func TestVersionKeeperRunRetries(t *testing.T) {
	st := mustStore(t, filepath.Join(t.TempDir(), "state.db"))
	clk := testingclock.NewFakeClock(time.Now())
	cloud := &fakeVersion{results: []versionResult{{err: errors.New("connection refused")}, {info: &v1363}}}
	k := NewVersionKeeper(VersionConfig{Fetcher: cloud, Store: st, Clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = k.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(waitTimeout)
	for {
		if _, ok := k.Version(); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no version within %s", waitTimeout)
		}
		if clk.HasWaiters() {
			clk.Step(link.MaxRetryDelay)
		}
		time.Sleep(time.Millisecond)
	}
	raw, err := st.GetMeta(context.Background(), VersionKey)
	if err != nil || len(raw) == 0 {
		t.Errorf("got stored %q, %v; want the persisted version", raw, err)
	}
}
