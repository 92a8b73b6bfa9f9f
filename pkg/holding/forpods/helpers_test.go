package forpods

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"golang.org/x/oauth2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

// podT is the pod type the tests name.
type podT = door.Pod

var (
	slicesGVR = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	nsGVR     = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	podsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	proxyPod  = door.Pod{Namespace: "kube-system", Name: "kube-proxy-a", UID: "uid-proxy", ServiceAccount: "kube-proxy"}
	dnsPod    = door.Pod{Namespace: "kube-system", Name: "coredns-a", UID: "uid-dns", ServiceAccount: "coredns"}
	// tenantPod's service account is not in DefaultOwners.
	tenantPod = door.Pod{Namespace: "tenant", Name: "reader", UID: "uid-tenant", ServiceAccount: "reader"}
)

// listAll is a cluster-wide list of gvr.
func listAll(gvr schema.GroupVersionResource) requestinfo.Attributes {
	return requestinfo.Attributes{ResourceRequest: true, Verb: "list", Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource}
}

// memStore is the metastore at the unit edge.
type memStore struct {
	mu      sync.Mutex
	meta    map[string][]byte // guarded by mu
	dropped []string          // guarded by mu
	scrubs  int               // guarded by mu
}

func (s *memStore) PutMeta(_ context.Context, k string, v []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meta[k] = v
	return nil
}

func (s *memStore) GetMeta(_ context.Context, k string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.meta[k]
	if !ok {
		return nil, metastore.ErrNotFound
	}
	return v, nil
}

func (s *memStore) DeleteMeta(_ context.Context, k string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.meta, k)
	return nil
}

func (s *memStore) Drop(_ context.Context, r string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropped = append(s.dropped, r)
	return nil
}

func (s *memStore) Scrub(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scrubs++
	return nil
}

// rig is Holdings over fake pods, a fake cloud sync and a memory store.
type rig struct {
	m      *Holdings
	pods   *versioncache.Cache
	store  *memStore
	clock  *clocktesting.FakeClock
	caches map[schema.GroupVersionResource]*versioncache.Cache
	syncs  atomic.Int32 // Sync calls
	// stuck makes the fake sync never serve, as a cloud that never
	// answers the first list.
	stuck  bool
	minted chan door.Pod
	// mintErr, when set before the rig runs, fails the mint for a pod.
	mintErr func(door.Pod) error
	cancel  context.CancelFunc
	done    chan struct{}
}

func podObject(t *testing.T, p door.Pod, rv uint64) *versioncache.Object {
	raw, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{
		"namespace": p.Namespace, "name": p.Name, "uid": p.UID, "resourceVersion": fmt.Sprint(rv)}})
	o, err := versioncache.NewObject(raw)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// newRig holds slices and namespaces for pods, at most max at once; the
// node runs pods. The fake sync fills a cache with one object at RV 100,
// after minting one token.
func newRig(t *testing.T, max int, store *memStore, pods ...door.Pod) *rig {
	r := &rig{store: store, clock: clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0)),
		caches: map[schema.GroupVersionResource]*versioncache.Cache{}, minted: make(chan door.Pod, 16)}
	r.pods = versioncache.New(podsGVR, 0)
	var objs []*versioncache.Object
	for i, p := range pods {
		objs = append(objs, podObject(t, p, uint64(10+i)))
	}
	r.pods.Replace(objs, 50)
	var held []Held
	for _, gvr := range []schema.GroupVersionResource{slicesGVR, nsGVR} {
		c := versioncache.New(gvr, 0)
		r.caches[gvr] = c
		held = append(held, Held{Resource: cloudsync.Resource{GVR: gvr, ForPods: true}, Cache: c})
	}
	owners, err := ParseAllowed(DefaultOwners)
	if err != nil {
		t.Fatal(err)
	}
	r.m = New(Config{Resources: held, Max: max, Pods: r.pods, PodPresent: r.present, Owners: owners,
		Mint: func(_ context.Context, p door.Pod) (string, time.Time, error) {
			r.minted <- p
			if r.mintErr != nil {
				if err := r.mintErr(p); err != nil {
					return "", time.Time{}, err
				}
			}
			return "token-of-" + p.UID, r.clock.Now().Add(time.Hour), nil
		},
		Sync: r.sync, Store: store, Clock: r.clock, Logger: discard()})
	t.Cleanup(func() { r.pods.Close() })
	return r
}

func (r *rig) present(ns, name, uid string) bool {
	o, _, err := r.pods.Get(ns, name)
	if err != nil || o == nil {
		return false
	}
	var m struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	return json.Unmarshal(o.Raw, &m) == nil && m.Metadata.UID == uid
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func (r *rig) sync(ctx context.Context, h Held, ts oauth2.TokenSource) error {
	r.syncs.Add(1)
	if _, err := ts.Token(); err != nil {
		return err
	}
	if r.stuck {
		<-ctx.Done()
		return nil
	}
	o, _ := versioncache.NewObject([]byte(`{"apiVersion":"v1","kind":"X","metadata":{"name":"held","resourceVersion":"100"}}`))
	h.Cache.Replace([]*versioncache.Object{o}, 100)
	<-ctx.Done()
	return nil
}

// start runs r.m until the test ends.
func (r *rig) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go func() {
		defer close(r.done)
		if err := r.m.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(r.stop)
}

func (r *rig) stop() {
	r.cancel()
	<-r.done
}

// deletePod removes p from the node's pods.
func (r *rig) deletePod(t *testing.T, p door.Pod) {
	if err := r.pods.Apply([]versioncache.Event{{Type: watch.Deleted, Object: podObject(t, p, r.pods.RV()+1)}}, r.pods.RV()+1); err != nil {
		t.Fatal(err)
	}
}

func newMemStore() *memStore { return &memStore{meta: map[string][]byte{}} }

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
