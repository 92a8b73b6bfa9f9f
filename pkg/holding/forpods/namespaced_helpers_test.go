package forpods

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"golang.org/x/oauth2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	cmGVR     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	widgetGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	opPod     = door.Pod{Namespace: "app", Name: "operator-a", UID: "uid-op", ServiceAccount: "operator"}
	otherPod  = door.Pod{Namespace: "other", Name: "tenant-a", UID: "uid-tenant", ServiceAccount: "tenant"}
)

// listIn is a list of gvr in ns.
func listIn(gvr schema.GroupVersionResource, ns string) requestinfo.Attributes {
	a := listAll(gvr)
	a.Namespace = ns
	return a
}

// nsRig is Namespaced over fake pods and a fake cloud sync.
type nsRig struct {
	m     *Namespaced
	pods  *versioncache.Cache
	store *memStore
	clock *clocktesting.FakeClock
	// objects is how many objects the fake sync lists, by namespace.
	mu      sync.Mutex
	objects map[string]int       // guarded by mu
	gone    map[nsKey]chan error // guarded by mu; a send ends that sync with the error
	cancel  context.CancelFunc
	done    chan struct{}
}

func newNSRig(t *testing.T, caps Caps, secrets bool, pods ...door.Pod) *nsRig {
	r := &nsRig{store: newMemStore(), clock: clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0)),
		objects: map[string]int{}, gone: map[nsKey]chan error{}}
	r.pods = versioncache.New(podsGVR, 0)
	var objs []*versioncache.Object
	for i, p := range pods {
		objs = append(objs, podObject(t, p, uint64(10+i)))
	}
	r.pods.Replace(objs, 50)
	present := (&rig{pods: r.pods}).present
	r.m = NewNamespaced(NamespacedConfig{Secrets: secrets, MaxPerNamespace: 4, Caps: caps, Pods: r.pods,
		PodPresent: present, Store: r.store, Clock: r.clock, Logger: discard(),
		Mint: func(_ context.Context, p door.Pod) (string, time.Time, error) {
			return "token-of-" + p.UID, r.clock.Now().Add(time.Hour), nil
		},
		Sync:       r.sync,
		API:        func(*versioncache.Cache, string) (http.Handler, error) { return servedBy("holding"), nil },
		Authorized: func(r *http.Request) bool { return r.Header.Get("X-Caller") == "pod" },
	})
	t.Cleanup(func() { r.pods.Close() })
	return r
}

// servedBy answers with its name.
func servedBy(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, name) })
}

// sync lists r.objects[ns] objects of 100 bytes each through the guard,
// then waits for the end or a gone signal.
func (r *nsRig) sync(ctx context.Context, h Held, ts oauth2.TokenSource, guard Guard) error {
	if _, err := ts.Token(); err != nil {
		return err
	}
	key := nsKey{h.Resource.GVR, h.Resource.Namespace}
	r.mu.Lock()
	n := r.objects[h.Resource.Namespace]
	gone := make(chan error, 1)
	r.gone[key] = gone
	r.mu.Unlock()
	var objs []*versioncache.Object
	for i := range n {
		raw := fmt.Sprintf(`{"apiVersion":"v1","kind":"X","metadata":{"namespace":%q,"name":"o%04d","resourceVersion":"100"},"pad":"%s"}`,
			h.Resource.Namespace, i, padding(100))
		o, err := versioncache.NewObject([]byte(raw))
		if err != nil {
			return err
		}
		objs = append(objs, o)
	}
	var b int64
	for _, o := range objs {
		b += int64(len(o.Raw))
	}
	if err := guard(len(objs), b); err != nil {
		return err
	}
	h.Cache.Replace(objs, 100)
	select {
	case <-ctx.Done():
		return nil
	case err := <-gone:
		return err
	}
}

func padding(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}

func (r *nsRig) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go func() {
		defer close(r.done)
		if err := r.m.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() { r.cancel(); <-r.done })
	eventually(t, "Run to start", func() bool { r.m.mu.Lock(); defer r.m.mu.Unlock(); return r.m.runCtx != nil })
}

// held reports whether gvr is held and synced in ns.
func (r *nsRig) held(gvr schema.GroupVersionResource, ns string) bool {
	for _, h := range r.m.Report() {
		if h.Namespace == ns && h.Resource == gvrString(gvr) {
			return h.Held && h.Objects >= 0
		}
	}
	return false
}

// routed answers a GET of path by a caller ("pod" or "node").
func routed(m *Namespaced, path, caller string) string {
	req, _ := http.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("X-Caller", caller)
	rec := &recorder{header: http.Header{}}
	m.Route(servedBy("main")).ServeHTTP(rec, req)
	return rec.body
}

// recorder keeps a response's body.
type recorder struct {
	header http.Header
	body   string
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(int)             {}
func (r *recorder) Write(b []byte) (int, error) { r.body += string(b); return len(b), nil }

// endSync ends the running sync of gvr in ns with err.
func (r *nsRig) endSync(t *testing.T, gvr schema.GroupVersionResource, ns string, err error) {
	r.mu.Lock()
	ch := r.gone[nsKey{gvr, ns}]
	r.mu.Unlock()
	if ch == nil {
		t.Fatalf("no sync of %s in %s", gvr, ns)
	}
	ch <- err
}

// noCaps are caps nothing reaches.
var noCaps = Caps{NamespaceObjects: 1 << 20, NamespaceBytes: 1 << 40, TotalBytes: 1 << 40}
