package startup_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	"github.com/apiserver-lite/apiserver-lite/pkg/startup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// resumeCloud is the cloud at the network edge: it records every list and
// watch, and hands each watch to the test.
type resumeCloud struct {
	mu       sync.Mutex
	lists    int      // full lists; guarded by mu
	checks   int      // limit=1 resourceVersion checks; guarded by mu
	watchRVs []string // guarded by mu
	watches  chan *watch.FakeWatcher
}

// ListWithContext answers a limit=1 resourceVersion check with an empty
// page at cloudRV, and refuses a full list.
func (c *resumeCloud) ListWithContext(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o.Limit == 1 {
		c.checks++
		l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMapList"}}
		l.SetResourceVersion(cloudRV)
		return l, nil
	}
	c.lists++
	return nil, errors.New("a store from an earlier build must resume, not relist")
}

// cloudRV is the cloud's resourceVersion, ahead of every fixture's
// watermark.
const cloudRV = "120"

func (c *resumeCloud) WatchWithContext(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	c.mu.Lock()
	c.watchRVs = append(c.watchRVs, o.ResourceVersion)
	c.mu.Unlock()
	fw := watch.NewFakeWithChanSize(1, false)
	c.watches <- fw
	return fw, nil
}

type fixtureDiscovery struct{}

func (fixtureDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{
		{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: metav1.Verbs{"get", "list", "watch"}},
	}}, nil
}

// A syncer on a store written by an earlier build resumes its watch from
// the stored watermark: no list, and the next cloud event is served.
func TestEarlierStoreResumesWithoutRelist(t *testing.T) {
	for _, file := range []string{"v1.sql", "v2.sql"} {
		t.Run(file, func(t *testing.T) {
			st := openFixture(t, loadFixture(t, t.TempDir(), file), false)
			caches, err := startup.LoadCaches(context.Background(), st, []startup.Resource{fixtureConfigMaps.Stored()}, 10, discard())
			if err != nil {
				t.Fatal(err)
			}
			cloud := &resumeCloud{watches: make(chan *watch.FakeWatcher, 1)}
			s := cloudsync.New(cloudsync.Config{Resource: fixtureConfigMaps, ListerWatcher: cloud, Discovery: fixtureDiscovery{},
				Store: st, Cache: caches[0], Link: linktest.Up(t), Logger: discard()})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = s.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-done })

			var fw *watch.FakeWatcher
			select {
			case fw = <-cloud.watches:
			case <-time.After(linktest.WaitTimeout):
				t.Fatal("no cloud watch")
			}
			fw.Modify(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"namespace": "app", "name": "one", "uid": "uid-one", "resourceVersion": "106"}}})
			linktest.WaitFor(t, "the cloud's next event served", func() bool { return caches[0].RV() == 106 })
			cloud.mu.Lock()
			defer cloud.mu.Unlock()
			if cloud.lists != 0 || cloud.checks > 1 || len(cloud.watchRVs) == 0 || cloud.watchRVs[0] != "105" {
				t.Errorf("got %d lists, %d checks and watches from %v; want no list, at most one check and a watch from 105",
					cloud.lists, cloud.checks, cloud.watchRVs)
			}
		})
	}
}
