package demand

import (
	"context"
	"sync"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// heardObserver records the resources it was told are current.
type heardObserver struct {
	cloudsync.NopObserver
	mu    sync.Mutex
	heard map[string]int
}

func (o *heardObserver) CloudHeard(resource string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.heard[resource]++
}

func (o *heardObserver) times(resource string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.heard[resource]
}

// TestDemandTellsWhatIsCurrent: /readyz's staleness of secrets and
// configmaps moves when a held object's watch delivers, and a kind
// nothing is held of is current; without it a daemon holding a pod's
// secret was unready max-staleness after its start.
func TestDemandTellsWhatIsCurrent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := newLocal(t, secretVolume("used"))
	cloud := &demandCloud{listRV: 40, asked: map[string]bool{}, watches: map[string]*watch.FakeWatcher{}, objs: map[string]*unstructured.Unstructured{
		"secrets/ns/used": namedObject("Secret", "ns", "used", 10, "in-use"),
	}}
	obs := &heardObserver{heard: map[string]int{}}
	d := New(Config{Pods: l.pods, Nodes: l.nodes, Secrets: l.secrets, ConfigMaps: l.cms, Source: cloud.source,
		Discovery: demandDiscovery{}, Store: l.store, Link: linktest.Up(t), Observer: obs})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	secrets, cms := l.secrets.Resource.Key(), l.cms.Resource.Key()
	waitFor(t, "the held secret's state heard", func() bool { return obs.times(secrets) > 0 })
	waitFor(t, "configmaps, none held, current", func() bool { return obs.times(cms) > 0 })
	before := obs.times(secrets)
	waitFor(t, "the secret's watch", func() bool { return cloud.watchOf("secrets/ns/used") != nil })
	bookmark := namedObject("Secret", "ns", "used", 70, "")
	cloud.watchOf("secrets/ns/used").Action(watch.Bookmark, bookmark)
	waitFor(t, "the bookmark heard", func() bool { return obs.times(secrets) > before })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: got %v, want nil", err)
	}
}
