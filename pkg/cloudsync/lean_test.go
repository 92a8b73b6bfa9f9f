package cloudsync

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/startup"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// leanCloud is the cloud at one resourceVersion, answering full lists
// (through fakeLW), metadata lists and exact reads from the same objects.
// A test may override the answers of the lean reads.
type leanCloud struct {
	rv   uint64
	objs []*unstructured.Unstructured
	// metaErr, when set, answers every metadata list.
	metaErr error
	// getAt, when set, answers the exact reads.
	getAt func(ns, name string, rv uint64) (*versioncache.Object, error)

	mu      sync.Mutex
	fetched []string // "ns/name@rv" of each exact read, guarded by mu
	metas   int      // metadata lists, guarded by mu
}

func (c *leanCloud) ListMeta(_ context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	c.mu.Lock()
	c.metas++
	c.mu.Unlock()
	if c.metaErr != nil {
		return nil, c.metaErr
	}
	l := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: fmt.Sprint(c.rv)}}
	// Two objects a page, to cover the continue tokens.
	start := 0
	fmt.Sscan(opts.Continue, &start)
	for i := start; i < len(c.objs) && i < start+2; i++ {
		o := c.objs[i]
		l.Items = append(l.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace: o.GetNamespace(), Name: o.GetName(), ResourceVersion: o.GetResourceVersion(), UID: o.GetUID()}})
	}
	if start+2 < len(c.objs) {
		l.Continue = fmt.Sprint(start + 2)
	}
	return l, nil
}

func (c *leanCloud) GetAt(_ context.Context, ns, name string, rv uint64) (*versioncache.Object, error) {
	c.mu.Lock()
	c.fetched = append(c.fetched, fmt.Sprintf("%s/%s@%d", ns, name, rv))
	c.mu.Unlock()
	if c.getAt != nil {
		return c.getAt(ns, name, rv)
	}
	for _, o := range c.objs {
		if o.GetNamespace() == ns && o.GetName() == name {
			return ToObject(o)
		}
	}
	return nil, nil
}

func (c *leanCloud) recorded() (metas int, fetched []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := slices.Clone(c.fetched)
	slices.Sort(f)
	return c.metas, f
}

// relistOutcome is what one relist left: the events a local watcher from
// the watermark got (or "closed"), the stored objects with their bytes,
// the watermark, and the full lists sent.
type relistOutcome struct {
	events, stored []string
	wm             uint64
	fullLists      int
	relistBytes    int // what the observer was told the relist received
}

// runRelist seeds a store and cache at wm with seed, relists once from
// cloud (lean when lean is set) and returns the outcome.
func runRelist(t *testing.T, seed []*unstructured.Unstructured, wm uint64, cloud *leanCloud, lean bool) relistOutcome {
	t.Helper()
	e := mustEnv(t, t.TempDir())
	var ops []metastore.Op
	for _, o := range seed {
		ops = append(ops, UpsertOp(mustObject(t, o)))
	}
	if err := e.store.Apply(context.Background(), e.res.Key(), ops, wm); err != nil {
		t.Fatalf("seed: %v", err)
	}
	objs, _, _ := startup.LoadObjects(context.Background(), e.store, e.res.Key(), discard)
	e.cache.Replace(objs, wm)
	local, err := e.cache.Watch(wm, false, versioncache.Predicate{})
	if err != nil {
		t.Fatalf("local watch: %v", err)
	}
	defer local.Stop()
	e.lw.list = func(metav1.ListOptions) (runtime.Object, error) { return cmList(cloud.rv, cloud.objs...), nil }
	cfg := Config{Resource: e.res, ListerWatcher: e.lw, Discovery: fakeDiscovery{}, Store: e.store, Cache: e.cache,
		Link: e.link, Logger: discard, Observer: &e.obs}
	if lean {
		cfg.Lean = cloud
	}
	if err := New(cfg).relist(context.Background()); err != nil {
		t.Fatalf("relist: %v", err)
	}
	var out relistOutcome
	out.events = drainLocal(local)
	stored, wmAfter, err := e.store.Load(context.Background(), e.res.Key())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	for _, o := range stored {
		out.stored = append(out.stored, fmt.Sprintf("%s/%s@%d=%s", o.Namespace, o.Name, o.RV, o.Raw))
	}
	out.wm = wmAfter
	out.fullLists, _ = e.lw.recorded()
	out.relistBytes = e.obs.relistBytes()
	return out
}

// drainLocal returns the events w holds, or ends with "closed" if the
// cache closed it. The cache hands events over before Apply returns.
func drainLocal(w *versioncache.Watcher) []string {
	var got []string
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return append(got, "closed")
			}
			if ev.Type != watch.Bookmark {
				got = append(got, fmt.Sprintf("%s %s/%s@%d uid=%s", ev.Type, ev.Object.Namespace, ev.Object.Name, ev.RV, ev.Object.UID))
			}
		default:
			return got
		}
	}
}

// cmu is a configmap with a UID.
func cmu(name string, rv uint64, data, uid string) *unstructured.Unstructured {
	return withUID(cm("a", name, rv, data), uid)
}

// leanSeed is forty configmaps k00..k39 at RVs 1..40, UIDs u00..u39.
func leanSeed() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for i := range 40 {
		out = append(out, cmu(fmt.Sprintf("k%02d", i), uint64(i+1), "v", fmt.Sprintf("u%02d", i)))
	}
	return out
}

// edit returns a copy of objs without the names in drop, with the given
// objects replacing or added to them, in name order.
func edit(objs []*unstructured.Unstructured, drop []string, put ...*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if !slices.Contains(drop, o.GetName()) && !slices.ContainsFunc(put, func(p *unstructured.Unstructured) bool { return p.GetName() == o.GetName() }) {
			out = append(out, o)
		}
	}
	out = append(out, put...)
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}

func TestLeanRelist(t *testing.T) {
	const wm = 50
	changed := edit(leanSeed(), []string{"k03", "k07"}, cmu("k05", 53, "v2", "u05"), cmu("new", 51, "n", "u-new"))
	for _, tt := range []struct {
		name  string
		cloud *leanCloud
		// wantFetched are the exact reads; wantFull whether the lean path
		// gave way to a full list.
		wantFetched []string
		fetchesVary bool // the first failed read ends the others
		wantFull    bool
		wantEvents  []string
	}{{
		name:        "modified, added and deleted",
		cloud:       &leanCloud{rv: 60, objs: changed},
		wantFetched: []string{"a/k05@60", "a/new@60"},
		wantEvents: []string{"ADDED a/new@51 uid=u-new", "MODIFIED a/k05@53 uid=u05",
			"DELETED a/k03@60 uid=u03", "DELETED a/k07@60 uid=u07"},
	}, {
		name:        "nothing changed",
		cloud:       &leanCloud{rv: 60, objs: leanSeed()},
		wantFetched: nil,
		wantEvents:  nil,
	}, {
		name:        "recreated with another UID after the watermark",
		cloud:       &leanCloud{rv: 60, objs: edit(leanSeed(), nil, cmu("k02", 55, "again", "u-re"))},
		wantFetched: []string{"a/k02@60"},
		wantEvents:  []string{"DELETED a/k02@55 uid=u02", "ADDED a/k02@55 uid=u-re"},
	}, {
		name:        "another UID at a version the watermark covers: the cloud regressed",
		cloud:       &leanCloud{rv: 60, objs: edit(leanSeed(), nil, cmu("k02", 3, "v", "u-other"))},
		wantFetched: nil,
		wantFull:    true,
		wantEvents:  []string{"closed"},
	}, {
		name:       "list behind the watermark: the cloud regressed",
		cloud:      &leanCloud{rv: 45, objs: edit(leanSeed(), []string{"k19"})},
		wantFull:   true,
		wantEvents: []string{"closed"},
	}, {
		name: "deleted between the list and the read",
		cloud: &leanCloud{rv: 60, objs: changed, getAt: func(ns, name string, rv uint64) (*versioncache.Object, error) {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
		}},
		fetchesVary: true,
		wantFull:    true,
		wantEvents: []string{"ADDED a/new@51 uid=u-new", "MODIFIED a/k05@53 uid=u05",
			"DELETED a/k03@60 uid=u03", "DELETED a/k07@60 uid=u07"},
	}, {
		name: "read answers another version",
		cloud: &leanCloud{rv: 60, objs: changed, getAt: func(ns, name string, rv uint64) (*versioncache.Object, error) {
			return ToObject(cmu(name, 59, "later", "u05"))
		}},
		fetchesVary: true,
		wantFull:    true,
		wantEvents: []string{"ADDED a/new@51 uid=u-new", "MODIFIED a/k05@53 uid=u05",
			"DELETED a/k03@60 uid=u03", "DELETED a/k07@60 uid=u07"},
	}, {
		name: "list RV compacted before the read",
		cloud: &leanCloud{rv: 60, objs: changed, getAt: func(string, string, uint64) (*versioncache.Object, error) {
			return nil, apierrors.NewResourceExpired("too old resource version: 60 (61)")
		}},
		fetchesVary: true,
		wantFull:    true,
		wantEvents: []string{"ADDED a/new@51 uid=u-new", "MODIFIED a/k05@53 uid=u05",
			"DELETED a/k03@60 uid=u03", "DELETED a/k07@60 uid=u07"},
	}, {
		name: "metadata list not acceptable",
		cloud: &leanCloud{rv: 60, objs: changed,
			metaErr: apierrors.NewGenericServerResponse(406, "list", schema.GroupResource{Resource: "configmaps"}, "", "", 0, false)},
		wantFull: true,
		wantEvents: []string{"ADDED a/new@51 uid=u-new", "MODIFIED a/k05@53 uid=u05",
			"DELETED a/k03@60 uid=u03", "DELETED a/k07@60 uid=u07"},
	}, {
		name:     "too many changes",
		cloud:    &leanCloud{rv: 60, objs: edit(leanSeed(), nil, cmu("k01", 51, "x", "u01"), cmu("k02", 52, "x", "u02"), cmu("k04", 54, "x", "u04"), cmu("k06", 56, "x", "u06"), cmu("k08", 58, "x", "u08"), cmu("k09", 59, "x", "u09"))},
		wantFull: true,
		wantEvents: []string{"MODIFIED a/k01@51 uid=u01", "MODIFIED a/k02@52 uid=u02", "MODIFIED a/k04@54 uid=u04",
			"MODIFIED a/k06@56 uid=u06", "MODIFIED a/k08@58 uid=u08", "MODIFIED a/k09@59 uid=u09"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			full := runRelist(t, leanSeed(), wm, &leanCloud{rv: tt.cloud.rv, objs: tt.cloud.objs}, false)
			got := runRelist(t, leanSeed(), wm, tt.cloud, true)
			if fmt.Sprint(got.events) != fmt.Sprint(tt.wantEvents) {
				t.Errorf("local events: got %v, want %v", got.events, tt.wantEvents)
			}
			if fmt.Sprint(got.events) != fmt.Sprint(full.events) {
				t.Errorf("local events: got %v, a full relist gives %v", got.events, full.events)
			}
			if got.wm != tt.cloud.rv || !equal(got.stored, full.stored) {
				t.Errorf("stored: got %v at %d, a full relist stores %v at %d", got.stored, got.wm, full.stored, full.wm)
			}
			if wantLists := map[bool]int{false: 0, true: 1}[tt.wantFull]; got.fullLists != wantLists {
				t.Errorf("full lists: got %d, want %d", got.fullLists, wantLists)
			}
			if _, fetched := tt.cloud.recorded(); !tt.fetchesVary && fmt.Sprint(fetched) != fmt.Sprint(tt.wantFetched) {
				t.Errorf("exact reads: got %v, want %v", fetched, tt.wantFetched)
			}
			// A lean relist counts the bytes of the objects it read whole,
			// none for the metadata list: fewer than a full list's.
			if !tt.wantFull && (got.relistBytes >= full.relistBytes || (got.relistBytes == 0) != (len(tt.wantFetched) == 0)) {
				t.Errorf("relist bytes: got %d for %d exact reads, a full relist %d", got.relistBytes, len(tt.wantFetched), full.relistBytes)
			}
		})
	}
}

func TestLeanRelistNeedsAWatermark(t *testing.T) {
	cloud := &leanCloud{rv: 60, objs: leanSeed()}
	got := runRelist(t, nil, 0, cloud, true)
	if metas, _ := cloud.recorded(); metas != 0 || got.fullLists != 1 || len(got.stored) != 40 {
		t.Errorf("first sync: got %d metadata lists, %d full lists, %d stored, want 0, 1 and 40", metas, got.fullLists, len(got.stored))
	}
}

func TestLeanRelistOffAfterUnsupported(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	for i, o := range leanSeed() {
		if err := e.store.Apply(context.Background(), e.res.Key(), []metastore.Op{UpsertOp(mustObject(t, o))}, uint64(i+1)); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
	objs, wm, _ := startup.LoadObjects(context.Background(), e.store, e.res.Key(), discard)
	e.cache.Replace(objs, wm)
	cloud := &leanCloud{rv: 60, objs: leanSeed(), metaErr: apierrors.NewGenericServerResponse(415, "list", schema.GroupResource{}, "", "", 0, false)}
	e.lw.list = func(metav1.ListOptions) (runtime.Object, error) { return cmList(cloud.rv, cloud.objs...), nil }
	s := New(Config{Resource: e.res, ListerWatcher: e.lw, Discovery: fakeDiscovery{}, Store: e.store, Cache: e.cache,
		Link: e.link, Logger: discard, Lean: cloud})
	for range 2 {
		if err := s.relist(context.Background()); err != nil {
			t.Fatalf("relist: %v", err)
		}
	}
	if metas, _ := cloud.recorded(); metas != 1 {
		t.Errorf("metadata lists: got %d, want 1: the second relist must not ask again", metas)
	}
	if lists, _ := e.lw.recorded(); lists != 2 {
		t.Errorf("full lists: got %d, want 2", lists)
	}
}
