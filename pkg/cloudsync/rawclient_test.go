package cloudsync

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// fakeCloud is a cloud API at the network edge: it answers LIST pages of
// configmaps in namespace ns, as kube-apiserver encodes them (items without
// apiVersion and kind), and a watch stream; requests are recorded.
type fakeCloud struct {
	t        *testing.T
	expireC1 bool // answer 410 to the continue token "c1"
	watch    string

	mu    sync.Mutex
	pages []string // raw query of each LIST, guarded by mu
}

const (
	cmItemA = `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"5","labels":{"app":"x"}},"data":{"k":"v"}}`
	cmItemB = `{"metadata":{"name":"b","namespace":"ns","resourceVersion":"7"}}`
)

func (f *fakeCloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/namespaces/ns/configmaps" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"no"}`)
		return
	}
	q := r.URL.Query()
	w.Header().Set("Content-Type", "application/json")
	if q.Get("watch") == "true" {
		fmt.Fprint(w, f.watch)
		return
	}
	f.mu.Lock()
	f.pages = append(f.pages, r.URL.RawQuery)
	f.mu.Unlock()
	page := func(cont, items string) string {
		return `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"` + cont + `"},"items":[` + items + `]}`
	}
	switch {
	case q.Get("continue") == "c1" && f.expireC1:
		w.WriteHeader(http.StatusGone)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"expired"}`)
	case q.Get("continue") == "c1":
		fmt.Fprint(w, page("", cmItemB))
	case q.Get("limit") == "":
		fmt.Fprint(w, page("", cmItemA+","+cmItemB))
	default:
		fmt.Fprint(w, page("c1", cmItemA))
	}
}

func (f *fakeCloud) queries() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.pages...)
}

// rawSyncer returns a Syncer listing configmaps of namespace ns, selected
// by app=x, from cloud through a RawClient.
func rawSyncer(t *testing.T, cloud *fakeCloud) *Syncer {
	t.Helper()
	r := Resource{GVR: cmGVR, Namespace: "ns", LabelSelector: "app=x"}
	e := mustEnv(t, t.TempDir())
	return New(Config{Resource: r, ListerWatcher: rawLW(t, cloud, r), Discovery: fakeDiscovery{}, Store: e.store, Cache: e.cache, Link: e.link})
}

func TestRawListPages(t *testing.T) {
	tests := []struct {
		name        string
		expire      bool
		wantQueries []string
	}{
		{name: "two pages", wantQueries: []string{
			"labelSelector=app%3Dx&limit=500",
			"continue=c1&labelSelector=app%3Dx&limit=500",
		}},
		{name: "continue expired: one full list", expire: true, wantQueries: []string{
			"labelSelector=app%3Dx&limit=500",
			"continue=c1&labelSelector=app%3Dx&limit=500",
			"labelSelector=app%3Dx",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cloud := &fakeCloud{t: t, expireC1: tt.expire}
			objs, rv, err := rawSyncer(t, cloud).list(context.Background())
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if rv != 9 {
				t.Errorf("got list rv %d, want 9", rv)
			}
			if got, want := strings.Join(cloud.queries(), " | "), strings.Join(tt.wantQueries, " | "); got != want {
				t.Errorf("got queries %s, want %s", got, want)
			}
			want := []string{
				`{"apiVersion":"v1","kind":"ConfigMap",` + cmItemA[1:],
				`{"apiVersion":"v1","kind":"ConfigMap",` + cmItemB[1:],
			}
			if len(objs) != len(want) {
				t.Fatalf("got %d objects, want %d", len(objs), len(want))
			}
			for i, o := range objs {
				if string(o.Raw) != want[i] {
					t.Errorf("object %d: got %s, want %s", i, o.Raw, want[i])
				}
			}
			if objs[0].RV != 5 || objs[0].Labels.Get("app") != "x" || objs[1].Name != "b" {
				t.Errorf("got %+v and %+v, want a at 5 labelled app=x and b", objs[0], objs[1])
			}
		})
	}
}

// rawLW returns a RawClient's ListerWatcher of r on cloud.
func rawLW(t *testing.T, cloud *fakeCloud, r Resource) cache.ListerWatcherWithContext {
	t.Helper()
	srv := httptest.NewServer(cloud)
	t.Cleanup(srv.Close)
	c, err := NewRawClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatalf("NewRawClient: %v", err)
	}
	return c.ListerWatcher(r)
}

func TestRawListStatusError(t *testing.T) {
	lw := rawLW(t, &fakeCloud{t: t}, Resource{GVR: cmGVR, Namespace: "other"})
	_, err := lw.ListWithContext(context.Background(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) || err.Error() != "no" {
		t.Errorf("got error %v, want the cloud's Forbidden status saying no", err)
	}
}

func TestRawWatchEvents(t *testing.T) {
	cloud := &fakeCloud{t: t, watch: `{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","resourceVersion":"11"}}}
{"type":"BOOKMARK","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"12"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"too old resource version: 1 (5)"}}
`}
	lw := rawLW(t, cloud, Resource{GVR: cmGVR, Namespace: "ns"})
	got := watchAll(t, lw.WatchWithContext)
	if len(got) != 3 {
		t.Fatalf("got %d events, want 3", len(got))
	}
	o, err := ToObject(got[0].Object)
	if err != nil || got[0].Type != watch.Added || o.Name != "a" || o.RV != 11 {
		t.Errorf("got %s %+v (%v), want ADDED a at 11", got[0].Type, o, err)
	}
	if rv, err := ResourceVersionOf(got[1].Object); got[1].Type != watch.Bookmark || rv != 12 || err != nil {
		t.Errorf("got %s at %d (%v), want BOOKMARK at 12", got[1].Type, rv, err)
	}
	err = Classify("watch event", apierrors.FromObject(got[2].Object))
	if got[2].Type != watch.Error || !errors.Is(err, ErrExpired) {
		t.Errorf("got %s: %v, want ERROR classified as expired", got[2].Type, err)
	}
}

// busyCloud answers the first LIST 429 with Retry-After: 1, as
// kube-apiserver's priority and fairness does, then a list; it counts the
// LISTs.
type busyCloud struct {
	mu    sync.Mutex
	lists int // guarded by mu
}

func (b *busyCloud) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	b.mu.Lock()
	b.lists++
	n := b.lists
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if n == 1 {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429,"message":"too many requests","details":{"retryAfterSeconds":1}}`)
		return
	}
	fmt.Fprint(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[]}`)
}

// WithoutRetries hands a 429 back at once instead of client-go retrying it
// after exactly its Retry-After; the default client retries it.
func TestRawClientWithoutRetries(t *testing.T) {
	for _, tt := range []struct {
		name      string
		own       bool
		wantLists int
		want429   bool
	}{
		{"client-go's retries", false, 2, false},
		{"without retries", true, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cloud := &busyCloud{}
			srv := httptest.NewServer(cloud)
			t.Cleanup(srv.Close)
			raw, err := NewRawClient(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			if tt.own {
				raw = raw.WithoutRetries()
			}
			_, err = raw.ListerWatcher(Resource{GVR: cmGVR, Namespace: "ns"}).ListWithContext(context.Background(), metav1.ListOptions{})
			if got := apierrors.IsTooManyRequests(err); got != tt.want429 || (!tt.want429 && err != nil) {
				t.Errorf("error: got %v, want a 429: %v", err, tt.want429)
			}
			cloud.mu.Lock()
			defer cloud.mu.Unlock()
			if cloud.lists != tt.wantLists {
				t.Errorf("LISTs: got %d, want %d", cloud.lists, tt.wantLists)
			}
		})
	}
}

// A watch whose send check fails is never sent, and client-go's Watch
// hands the check's error back as it is, so Classify still tells an
// expired resume from a failure.
func TestRawWatchDroppedBySendCheck(t *testing.T) {
	var mu sync.Mutex
	asked := 0 // guarded by mu
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		asked++
	}))
	t.Cleanup(srv.Close)
	raw, err := NewRawClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	lw := raw.WithoutRetries().ListerWatcher(Resource{GVR: cmGVR, Namespace: "ns"})
	ctx := WithSendCheck(t.Context(), func() error { return fmt.Errorf("resume from 5: %w", ErrExpired) })
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "5"})
	if w != nil {
		w.Stop()
	}
	if err == nil || !errors.Is(Classify("watch", err), ErrExpired) {
		t.Errorf("got %v, want %v", err, ErrExpired)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 0 {
		t.Errorf("got %d requests sent, want none", asked)
	}
}
