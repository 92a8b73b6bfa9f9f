package relist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// foldCloud is the cloud at the network edge: exact reads and namespace
// lists answered from objs, and a record of each.
type foldCloud struct {
	objs map[string]*versioncache.Object // by "ns/name"
	// listErr, when set, answers every namespace list.
	listErr error

	mu    sync.Mutex
	gets  []string // "ns/name", guarded by mu
	lists []string // namespaces, guarded by mu
}

func (c *foldCloud) ListMeta(context.Context, metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	return nil, errors.New("not used")
}

func (c *foldCloud) GetAt(_ context.Context, ns, name string, _ uint64) (*versioncache.Object, error) {
	c.mu.Lock()
	c.gets = append(c.gets, ns+"/"+name)
	c.mu.Unlock()
	return c.objs[ns+"/"+name], nil
}

func (c *foldCloud) ListAt(_ context.Context, ns string, _ uint64) ([]*versioncache.Object, error) {
	c.mu.Lock()
	c.lists = append(c.lists, ns)
	c.mu.Unlock()
	if c.listErr != nil {
		return nil, c.listErr
	}
	var out []*versioncache.Object
	for _, o := range c.objs {
		if o.Namespace == ns {
			out = append(out, o)
		}
	}
	return out, nil
}

func foldObject(t *testing.T, ns, name string, rv uint64) *versioncache.Object {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{
		"namespace": ns, "name": name, "resourceVersion": fmt.Sprint(rv), "uid": "u-" + name}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := versioncache.NewObject(raw)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// A namespace with many of the objects to read, and few others, is read
// with one list of it; the rest one by one; the result is in plan order
// and each object as listed.
func TestFetchPlanFoldsNamespaces(t *testing.T) {
	cloud := &foldCloud{objs: map[string]*versioncache.Object{}}
	var p Plan
	p.Listed = map[string]int{}
	add := func(ns string, n, changed int) {
		for i := range n {
			name := fmt.Sprintf("%s-%d", ns, i)
			cloud.objs[ns+"/"+name] = foldObject(t, ns, name, 30)
			p.Listed[ns]++
			if i < changed {
				p.Fetch = append(p.Fetch, Item{Namespace: ns, Name: name, RV: 30, UID: "u-" + name})
			}
		}
	}
	add("busy", 8, 4)    // 4 reads, 8 listed: one list
	add("sparse", 20, 3) // 3 reads, 20 listed: the list is too large
	add("few", 2, 2)     // 2 reads: below foldMinItems
	got, err := FetchPlan(context.Background(), cloud, p, 40)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range p.Fetch {
		if got[i] == nil || got[i].Namespace != it.Namespace || got[i].Name != it.Name {
			t.Errorf("result %d: got %v, want %s/%s", i, got[i], it.Namespace, it.Name)
		}
	}
	slices.Sort(cloud.gets)
	wantGets := []string{"few/few-0", "few/few-1", "sparse/sparse-0", "sparse/sparse-1", "sparse/sparse-2"}
	if !slices.Equal(cloud.gets, wantGets) || !slices.Equal(cloud.lists, []string{"busy"}) {
		t.Errorf("got reads %v and namespace lists %v, want reads %v and a list of busy", cloud.gets, cloud.lists, wantGets)
	}
}

// A namespace list that is not the listed state (an object missing, or at
// another version) or that the cloud compacted meanwhile gives way to the
// full list, as a single read does; a source that cannot list a namespace
// reads every object alone.
func TestFetchPlanFoldChecks(t *testing.T) {
	for _, tt := range []struct {
		name      string
		mutate    func(c *foldCloud)
		noLister  bool
		wantErr   error
		wantLists int
	}{
		{"as listed", func(*foldCloud) {}, false, nil, 1},
		{"object missing", func(c *foldCloud) { delete(c.objs, "ns/o-1") }, false, ErrFallback, 1},
		{"other version", func(c *foldCloud) { c.objs["ns/o-2"] = foldObject(t, "ns", "o-2", 35) }, false, ErrFallback, 1},
		{"compacted", func(c *foldCloud) {
			c.listErr = apierrors.NewResourceExpired("too old resource version")
		}, false, ErrFallback, 1},
		{"no namespace lists", func(*foldCloud) {}, true, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cloud := &foldCloud{objs: map[string]*versioncache.Object{}}
			p := Plan{Listed: map[string]int{"ns": 3}}
			for i := range 3 {
				name := fmt.Sprintf("o-%d", i)
				cloud.objs["ns/"+name] = foldObject(t, "ns", name, 30)
				p.Fetch = append(p.Fetch, Item{Namespace: "ns", Name: name, RV: 30, UID: "u-" + name})
			}
			tt.mutate(cloud)
			var src Source = cloud
			if tt.noLister {
				src = struct{ Source }{cloud}
			}
			_, err := FetchPlan(context.Background(), src, p, 40)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("error: got %v, want %v", err, tt.wantErr)
			}
			if len(cloud.lists) != tt.wantLists {
				t.Errorf("namespace lists: got %d, want %d", len(cloud.lists), tt.wantLists)
			}
		})
	}
}
