package cloudsync

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// blockingDiscoverer answers once release is closed, counting the
// requests it got and telling arrived of each.
type blockingDiscoverer struct {
	calls   atomic.Int32
	arrived chan struct{}
	release chan struct{}
}

// joinWait is how long the first lookup is held for the others to join
// it; without sharing they all arrive at once.
const joinWait = 200 * time.Millisecond

func (b *blockingDiscoverer) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	b.calls.Add(1)
	b.arrived <- struct{}{}
	<-b.release
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{{Name: "pods"}}}, nil
}

// TestSharedDiscoveryOneRequestPerGroupVersion: the syncs' lookups at
// start cost the cloud one discovery request per group/version, not one
// per resource.
func TestSharedDiscoveryOneRequestPerGroupVersion(t *testing.T) {
	const lookups = 4
	fake := &blockingDiscoverer{arrived: make(chan struct{}, lookups+1), release: make(chan struct{})}
	go func() { // hold the requests until all arrive or joinWait after one
		defer close(fake.release)
		<-fake.arrived
		for i := 1; i < lookups; i++ {
			select {
			case <-fake.arrived:
			case <-time.After(joinWait):
				return
			}
		}
	}()
	d := SharedDiscovery(fake)
	var wg sync.WaitGroup
	for range lookups {
		wg.Go(func() {
			list, err := d.ServerResourcesForGroupVersion("v1")
			if err != nil || list == nil || list.GroupVersion != "v1" {
				t.Errorf("lookup: got %v, %v, want the v1 list", list, err)
			}
		})
	}
	wg.Wait()
	if got := fake.calls.Load(); got != 1 {
		t.Errorf("got %d discovery requests for %d concurrent lookups of v1, want 1", got, lookups)
	}
	if _, err := d.ServerResourcesForGroupVersion("v1"); err != nil {
		t.Fatalf("later lookup: %v", err)
	}
	if got := fake.calls.Load(); got != 2 {
		t.Errorf("got %d discovery requests after a later lookup, want 2: nothing is kept", got)
	}
}
