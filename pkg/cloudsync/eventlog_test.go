package cloudsync

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/startup"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
)

// logSize (events) is the watch cache and event log size of the restart
// tests: small, so the log trims.
const logSize = 6

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// cmObject builds a configmap at rv with label app.
func cmObject(t *testing.T, name string, rv uint64, app string) *versioncache.Object {
	t.Helper()
	raw := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns","name":%q,"resourceVersion":"%d","labels":{"app":%q}}}`, name, rv, app)
	o, err := versioncache.NewObject(raw)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// node is a store and a cache committed to as the sync does: durable
// first, then visible.
type node struct {
	store *metastore.Store
	cache *versioncache.Cache
}

func startNode(t *testing.T, path string) *node {
	t.Helper()
	st, _, err := metastore.OpenOrRecover(context.Background(), path, metastore.Options{EventLogSize: logSize})
	if err != nil {
		t.Fatal(err)
	}
	c := versioncache.New(cmGVR, logSize)
	snap, err := st.LoadSnapshot(context.Background(), "configmaps")
	if err != nil {
		t.Fatal(err)
	}
	startup.Fill(c, snap, discard)
	return &node{store: st, cache: c}
}

func (n *node) stop(t *testing.T) {
	t.Helper()
	n.cache.Close()
	if err := n.store.Close(); err != nil {
		t.Fatal(err)
	}
}

// commit applies events at rv to the store, then to the cache.
func (n *node) commit(t *testing.T, rv uint64, events ...versioncache.Event) {
	t.Helper()
	ops := make([]metastore.Op, 0, len(events))
	for _, ev := range events {
		if ev.Type == watch.Deleted {
			ops = append(ops, DeleteOp(ev.Object))
		} else {
			ops = append(ops, UpsertOp(ev.Object))
		}
	}
	if err := n.store.Apply(context.Background(), "configmaps", ops, rv); err != nil {
		t.Fatal(err)
	}
	if err := n.cache.Apply(events, rv); err != nil {
		t.Fatal(err)
	}
}

// watchFrom returns the events a watch from rv replays, rendered with
// their encodings.
func watchFrom(t *testing.T, c *versioncache.Cache, rv uint64, p versioncache.Predicate) ([]string, error) {
	t.Helper()
	w, err := c.Watch(rv, false, p)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	var out []string
	for _, e := range w.Initial() {
		out = append(out, fmt.Sprintf("%s %d %s", e.Type, e.RV, e.Object.Raw))
	}
	return out, nil
}

// A client watching from any RV inside the event log's window before a
// restart resumes after it with exactly the events it missed, with and
// without a selector; an RV older than the window gets 410 as before.
func TestWatchResumesAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	n := startNode(t, path)
	a1, b2 := cmObject(t, "a", 1, "web"), cmObject(t, "b", 2, "web")
	if err := n.store.Apply(context.Background(), "configmaps", []metastore.Op{UpsertOp(a1), UpsertOp(b2)}, 2); err != nil {
		t.Fatal(err)
	}
	n.cache.Replace([]*versioncache.Object{a1, b2}, 2)
	n.commit(t, 3, versioncache.Event{Type: watch.Modified, Object: cmObject(t, "a", 3, "db")})
	n.commit(t, 5, versioncache.Event{Type: watch.Added, Object: cmObject(t, "c", 4, "web")},
		versioncache.Event{Type: watch.Deleted, Object: cmObject(t, "b", 5, "web")})
	n.commit(t, 7) // a progress marker only
	for rv := uint64(8); rv <= 11; rv++ {
		n.commit(t, rv, versioncache.Event{Type: watch.Modified, Object: cmObject(t, "c", rv, "web")})
	}
	web := versioncache.Predicate{Label: labels.SelectorFromSet(labels.Set{"app": "web"})}
	preds := map[string]versioncache.Predicate{"all": {}, "app=web": web}
	before := map[string][]string{}
	for rv := uint64(0); rv <= 11; rv++ {
		for name, p := range preds {
			got, err := watchFrom(t, n.cache, rv, p)
			before[fmt.Sprint(name, rv)] = append(got, fmt.Sprint(err))
		}
	}
	n.stop(t)

	n = startNode(t, path)
	defer n.stop(t)
	if n.cache.RV() != 11 {
		t.Fatalf("restored cache rv: got %d, want 11", n.cache.RV())
	}
	resumable := 0
	for rv := uint64(0); rv <= 11; rv++ {
		for name, p := range preds {
			got, err := watchFrom(t, n.cache, rv, p)
			got = append(got, fmt.Sprint(err))
			if want := before[fmt.Sprint(name, rv)]; !slices.Equal(got, want) {
				t.Errorf("watch %s from %d after restart:\n got  %q\n want %q", name, rv, got, want)
			}
			if err == nil {
				resumable++
			}
		}
	}
	if resumable == 0 || resumable == 24 {
		t.Errorf("got %d resumable watches of 24, want some inside and some outside the window", resumable)
	}
	// The restored cache goes on as before.
	n.commit(t, 12, versioncache.Event{Type: watch.Deleted, Object: cmObject(t, "a", 12, "db")})
	got, err := watchFrom(t, n.cache, 11, versioncache.Predicate{})
	if err != nil || len(got) != 1 {
		t.Errorf("watch from 11 after a new commit: got %q, %v, want the delete", got, err)
	}
}
