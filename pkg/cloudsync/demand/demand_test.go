package demand

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// waitTimeout bounds how long a test waits for an asynchronous effect.
const waitTimeout = 10 * time.Second

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// waitFor polls cond until it holds or waitTimeout passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, waitTimeout, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// demandCloud is the cloud at the network edge: named objects answered
// from a map, one fake watch per object, and a record of what was asked.
type demandCloud struct {
	mu      sync.Mutex
	objs    map[string]*unstructured.Unstructured // by "resource/ns/name"; guarded by mu
	watches map[string]*watch.FakeWatcher         // guarded by mu
	asked   map[string]bool                       // guarded by mu
	listRV  uint64                                // guarded by mu
	// lists counts the reads of the state, LISTs and streaming watches,
	// watchRVs the watches' resourceVersions ("stream" for a streaming
	// one, "stream>=RV" for one not older than RV), by key. Guarded by mu.
	lists    map[string]int
	watchRVs map[string][]string
	// background says, for each of watchRVs, whether it was asked as
	// cloudsync.Background. Guarded by mu.
	background map[string][]bool
	// plainLists counts the LISTs and streams the streaming watches asked
	// for, refused ones included. Guarded by mu.
	plainLists, streams int
	// noStreams makes the cloud refuse streaming watches with 422, as one
	// without the WatchList feature does. Guarded by mu.
	noStreams bool
	// failResumes is how many more watches from a resourceVersion fail
	// with failResumeWith. Guarded by mu.
	failResumes    int
	failResumeWith error
	// refuse is how many more LISTs of a key are answered 403, as the Node
	// authorizer does while its graph lacks the pod. Guarded by mu.
	refuse map[string]int
	// refuseWith, when set, is the refusal instead of 403. Guarded by mu.
	refuseWith error
	// behindFloors is how many more streaming watches not older than a
	// resourceVersion are refused as too large, as a cloud whose etcd
	// was restored from a backup answers. Guarded by mu.
	behindFloors int
	// waiting holds a resume of a key until its channel closes, as a
	// request waits for its place in the opening limit, which then runs
	// its check (cloudsync.SendCheck). Guarded by mu.
	waiting map[string]chan struct{}
}

// tooLarge is kube-apiserver's answer to a read not older than rv that
// its watch cache has not reached within its wait.
func tooLarge(rv string) error {
	err := apierrors.NewTimeoutError("Too large resource version: "+rv+", current: 30", 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return err
}

func (c *demandCloud) source(r cloudsync.Resource) cache.ListerWatcherWithContext {
	key := r.GVR.Resource + "/" + r.Namespace + "/" + r.FieldSelector[len("metadata.name="):]
	return &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.plainLists++
			if err := c.read(r, key); err != nil {
				return nil, err
			}
			l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
			l.SetResourceVersion(strconv.FormatUint(c.listRV, 10))
			if o := c.objs[key]; o != nil {
				l.Items = append(l.Items, *o.DeepCopy())
			}
			return l, nil
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if err := c.awaitPlace(ctx, key, o); err != nil {
				return nil, err
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if o.SendInitialEvents != nil {
				return c.stream(ctx, r, key, o)
			}
			c.recordWatch(ctx, key, o.ResourceVersion)
			if c.failResumes > 0 {
				c.failResumes--
				return nil, c.failResumeWith
			}
			w := watch.NewFakeWithChanSize(10, false)
			c.watches[key] = w
			return w, nil
		},
	}
}

// awaitPlace waits, for a resume of key, until c.waiting lets it go, and
// then runs its check, as the opening limit does.
func (c *demandCloud) awaitPlace(ctx context.Context, key string, o metav1.ListOptions) error {
	c.mu.Lock()
	place := c.waiting[key]
	c.mu.Unlock()
	if place != nil && o.SendInitialEvents == nil {
		select {
		case <-place:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return cloudsync.SendCheck(ctx)
}

// read records a read of key's state and answers the refusal due, if
// any. c.mu is held.
func (c *demandCloud) read(r cloudsync.Resource, key string) error {
	c.asked[key] = true
	if c.lists != nil {
		c.lists[key]++
	}
	if c.refuse[key] > 0 {
		c.refuse[key]--
		if c.refuseWith != nil {
			return c.refuseWith
		}
		return apierrors.NewForbidden(schema.GroupResource{Resource: r.GVR.Resource}, key, errors.New("no relationship found"))
	}
	return nil
}

// stream answers a streaming watch as kube-apiserver does: the object, if
// any, as ADDED, then the bookmark that ends the initial events at
// listRV, on a watch that stays open. c.mu is held.
func (c *demandCloud) stream(ctx context.Context, r cloudsync.Resource, key string, o metav1.ListOptions) (watch.Interface, error) {
	c.streams++
	if c.noStreams || !*o.SendInitialEvents || o.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan || !o.AllowWatchBookmarks {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "ListOptions"}, "",
			field.ErrorList{field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")})
	}
	if err := c.read(r, key); err != nil {
		return nil, err
	}
	what := "stream"
	if o.ResourceVersion != "" {
		what += ">=" + o.ResourceVersion
	}
	c.recordWatch(ctx, key, what)
	if o.ResourceVersion != "" && c.behindFloors > 0 {
		c.behindFloors--
		return nil, tooLarge(o.ResourceVersion)
	}
	w := watch.NewFakeWithChanSize(10, false)
	if obj := c.objs[key]; obj != nil {
		w.Add(obj.DeepCopy())
	}
	end := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
	end.SetResourceVersion(strconv.FormatUint(c.listRV, 10))
	end.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	w.Action(watch.Bookmark, end)
	c.watches[key] = w
	return w, nil
}

// recordWatch records a watch of key from what, if watches are
// recorded. c.mu is held.
func (c *demandCloud) recordWatch(ctx context.Context, key, what string) {
	if c.watchRVs != nil {
		c.watchRVs[key] = append(c.watchRVs[key], what)
		if c.background == nil {
			c.background = map[string][]bool{}
		}
		c.background[key] = append(c.background[key], cloudsync.IsBackground(ctx))
	}
}

func (c *demandCloud) wasAsked(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked[key]
}

func (c *demandCloud) watchOf(key string) *watch.FakeWatcher {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watches[key]
}

type demandDiscovery struct{}

func (demandDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{
		{Name: "secrets", Namespaced: true, Kind: "Secret", Verbs: metav1.Verbs{"get", "list", "watch"}},
		{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: metav1.Verbs{"get", "list", "watch"}},
	}}, nil
}

func namedObject(kind, ns, name string, rv uint64, data string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": kind,
		"metadata": map[string]any{"namespace": ns, "name": name, "resourceVersion": strconv.FormatUint(rv, 10)},
		"data":     map[string]any{"k": data},
	}}
}

func mustCacheObject(t *testing.T, v any) *versioncache.Object {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	o, err := versioncache.NewObject(raw)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// local is a Holder's local side: a real store, and the caches of the
// node's one pod p1 (with volumes), its Node n1, secrets and configmaps.
type local struct {
	store        *metastore.Store
	pods, nodes  *versioncache.Cache
	secrets, cms Kind
}

func newLocal(t *testing.T, volumes ...corev1.Volume) local {
	t.Helper()
	store, err := metastore.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p1", ResourceVersion: "20"},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c"}}, Volumes: volumes},
	}
	node := &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "5"}}
	l := local{store: store,
		pods:  versioncache.New(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, 10),
		nodes: versioncache.New(schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, 10),
		secrets: Kind{Resource: cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, OnDemand: true},
			Cache: versioncache.New(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, 10)},
		cms: Kind{Resource: cloudsync.Resource{GVR: cmGVR, OnDemand: true}, Cache: versioncache.New(cmGVR, 10)},
	}
	l.pods.Replace([]*versioncache.Object{mustCacheObject(t, pod)}, 30)
	l.nodes.Replace([]*versioncache.Object{mustCacheObject(t, node)}, 30)
	return l
}

// holder returns a Holder of l's kinds from cloud.
func (l local) holder(t *testing.T, cloud *demandCloud) *Holder {
	return New(Config{Pods: l.pods, Nodes: l.nodes, Secrets: l.secrets, ConfigMaps: l.cms, Source: cloud.source,
		Discovery: demandDiscovery{}, Store: l.store, Link: linktest.Up(t)})
}

// secretVolume mounts the secret name.
func secretVolume(name string) corev1.Volume {
	return corev1.Volume{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}}
}

func TestDemandHoldsOnlyReferencedObjects(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := newLocal(t, secretVolume("used"),
		corev1.Volume{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}}}}}}})
	store, pods, secrets, cms := l.store, l.pods, l.secrets, l.cms
	cloud := &demandCloud{listRV: 40, asked: map[string]bool{}, watches: map[string]*watch.FakeWatcher{}, objs: map[string]*unstructured.Unstructured{
		"secrets/ns/used":                namedObject("Secret", "ns", "used", 10, "in-use"),
		"secrets/ns/unused":              namedObject("Secret", "ns", "unused", 11, "never"),
		"configmaps/ns/kube-root-ca.crt": namedObject("ConfigMap", "ns", "kube-root-ca.crt", 12, "ca"),
	}}
	d := l.holder(t, cloud)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	held := func(k Kind, name string) bool {
		o, _, err := k.Cache.Get("ns", name)
		return err == nil && o != nil
	}
	waitFor(t, "the referenced secret and configmap", func() bool { return held(secrets, "used") && held(cms, "kube-root-ca.crt") })
	if cloud.wasAsked("secrets/ns/unused") || held(secrets, "unused") {
		t.Errorf("unreferenced secret was asked for or held, want neither")
	}
	if stored, _ := mustLoadKey(t, store, secrets.Resource.Key()); len(stored) != 1 || stored[0].Name != "used" {
		t.Errorf("stored secrets: got %v, want only ns/used", stored)
	}

	// A cloud change of a held object reaches local clients.
	waitFor(t, "the secret's watch", func() bool { return cloud.watchOf("secrets/ns/used") != nil })
	cloud.watchOf("secrets/ns/used").Modify(namedObject("Secret", "ns", "used", 50, "rotated"))
	waitFor(t, "the rotated secret", func() bool {
		o, _, _ := secrets.Cache.Get("ns", "used")
		return o != nil && o.RV == 50
	})

	// The last referencing pod goes: local watchers see DELETED and the
	// store no longer holds it.
	w, err := secrets.Cache.Watch(secrets.Cache.RV(), false, versioncache.Predicate{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	podObj, _, _ := pods.Get("ns", "p1")
	gone, err := podObj.WithRV(60)
	if err != nil {
		t.Fatal(err)
	}
	if err := pods.Apply([]versioncache.Event{{Type: watch.Deleted, Object: gone}}, 60); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.Events():
		if ev.Type != watch.Deleted || ev.Object.Name != "used" || ev.RV != 60 {
			t.Errorf("got %s %s at %d, want DELETED used at 60", ev.Type, ev.Object.Name, ev.RV)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("no DELETED event for the unreferenced secret")
	}
	if stored, wm := mustLoadKey(t, store, secrets.Resource.Key()); len(stored) != 0 || wm != 60 {
		t.Errorf("stored secrets after the pod left: got %v at %d, want none at 60", stored, wm)
	}
	waitFor(t, "the configmap to go", func() bool { return !held(cms, "kube-root-ca.crt") })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: got %v, want nil", err)
	}
}

func mustLoadKey(t *testing.T, s *metastore.Store, key string) ([]metastore.Object, uint64) {
	t.Helper()
	objs, wm, err := s.Load(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return objs, wm
}

// asks returns the LISTs of key and its watches' resourceVersions so far.
func (c *demandCloud) asks(key string) (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists[key], append([]string(nil), c.watchRVs[key]...)
}

// backgrounds says, for each watch of key, whether it was asked as
// cloudsync.Background.
func (c *demandCloud) backgrounds(key string) []bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.background[key])
}

// A referenced object's watch that ends is resumed from the last
// resourceVersion it delivered, bookmarks included, without reading its
// state again; only an expired resourceVersion reads it again, with a
// streaming watch.
func TestDemandResumesObjectWatchWithoutListing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := newLocal(t, secretVolume("used"))
	const key = "secrets/ns/used"
	cloud := &demandCloud{listRV: 40, asked: map[string]bool{}, watches: map[string]*watch.FakeWatcher{},
		lists: map[string]int{}, watchRVs: map[string][]string{},
		objs: map[string]*unstructured.Unstructured{key: namedObject("Secret", "ns", "used", 10, "in-use")}}
	d := l.holder(t, cloud)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()

	watches := func(n int) func() bool {
		return func() bool { _, rvs := cloud.asks(key); return len(rvs) == n }
	}
	waitFor(t, "the first watch", watches(1))
	first := cloud.watchOf(key)
	first.Action(watch.Bookmark, namedObject("Secret", "ns", "used", 45, ""))
	first.Stop() // the cloud ends the watch, as at its timeout
	waitFor(t, "the resumed watch", watches(2))
	if lists, rvs := cloud.asks(key); lists != 1 || rvs[1] != "45" {
		t.Errorf("after a watch ended: got %d reads and watches from %v, want 1 read and the watch resumed from 45", lists, rvs)
	}

	cloud.watchOf(key).Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired})
	waitFor(t, "the streaming watch after 410", watches(3))
	if lists, rvs := cloud.asks(key); lists != 2 || rvs[2] != "stream>=45" {
		t.Errorf("after 410: got %d reads and watches from %v, want 2 reads, the second a streaming watch not older than 45", lists, rvs)
	}
	// The stream goes on as the watch; once it ends, the next resumes from
	// the resourceVersion of the bookmark that ended its initial events.
	cloud.watchOf(key).Stop()
	waitFor(t, "the watch after the stream", watches(4))
	if lists, rvs := cloud.asks(key); lists != 2 || rvs[3] != "40" {
		t.Errorf("after the stream ended: got %d reads and watches from %v, want 2 reads and a watch from the bookmark's 40", lists, rvs)
	}
	if cloud.plainLists != 0 {
		t.Errorf("LISTs: got %d, want none (a streaming watch reads the state)", cloud.plainLists)
	}
}

// An expired object is read again not older than its expired point, which
// a restarted cloud's watch cache serves without asking etcd; a cloud that
// has not reached that point (a restored etcd) gets a read of its latest
// state at once, not after the object's backoff.
func TestDemandRereadsBehindFloorAsLatest(t *testing.T) {
	l := newLocal(t, secretVolume("used"))
	const key = "secrets/ns/used"
	cloud := newResumeCloud()
	cloud.behindFloors = 1
	clk := linktest.NewRecClock()
	stop := runHolderWith(t, l, cloud, clk)
	defer stop()
	watches := func(n int) func() bool {
		return func() bool { _, rvs := cloud.asks(key); return len(rvs) == n }
	}
	waitFor(t, "the first watch", watches(1))
	cloud.watchOf(key).Action(watch.Bookmark, namedObject("Secret", "ns", "used", 45, ""))
	cloud.watchOf(key).Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired})
	before := len(clk.Timers())
	waitFor(t, "the read not older than 45, then the latest", func() bool {
		clk.Step(link.DefaultRelistSpread) // past the relist delay
		return watches(3)()
	})
	var delays []time.Duration
	for _, d := range clk.Timers()[before:] {
		if d != resumeFlush && d != resumeFlushListed && d != heardEvery {
			delays = append(delays, d)
		}
	}
	if len(delays) != 1 || delays[0] >= link.DefaultRelistSpread {
		t.Errorf("delays after the 410: got %v, want the relist delay alone (no backoff before the latest state)", delays)
	}
	if _, rvs := cloud.asks(key); !slices.Equal(rvs, []string{"stream", "stream>=45", "stream"}) {
		t.Errorf("got watches %v, want [stream stream>=45 stream]", rvs)
	}
}
