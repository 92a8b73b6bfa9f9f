package versioncache

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// receiveTimeout bounds how long a test waits for an event that must come;
// it only turns a hang into a failure and asserts nothing about speed.
const receiveTimeout = 30 * time.Second

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// podJSON returns a v1 Pod with the given identity, RV, app label (none if
// "") and node.
func podJSON(ns, name string, rv uint64, app, node string) []byte {
	meta := map[string]any{"name": name, "namespace": ns, "resourceVersion": strconv.FormatUint(rv, 10)}
	if app != "" {
		meta["labels"] = map[string]string{"app": app}
	}
	obj := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": map[string]any{"nodeName": node}}
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return b
}

func MustNewObject(t testing.TB, raw []byte) *Object {
	t.Helper()
	o, err := NewObject(raw)
	if err != nil {
		t.Fatalf("NewObject(%s): %v", raw, err)
	}
	return o
}

func MustPairs(t testing.TB, m map[string]string) Pairs {
	t.Helper()
	p, err := PairsOf(m)
	if err != nil {
		t.Fatalf("PairsOf(%v): %v", m, err)
	}
	return p
}

func MustPod(t testing.TB, ns, name string, rv uint64, app string) *Object {
	t.Helper()
	return MustNewObject(t, podJSON(ns, name, rv, app, ""))
}

func MustLabelSelector(t testing.TB, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatalf("parse selector %q: %v", s, err)
	}
	return sel
}

// MustReadyCache returns a cache replaced with objs at rv.
func MustReadyCache(t testing.TB, capacity int, objs []*Object, rv uint64) *Cache {
	t.Helper()
	c := New(podsGVR, capacity)
	c.Replace(objs, rv)
	t.Cleanup(c.Close)
	return c
}

func MustApply(t testing.TB, c *Cache, rv uint64, events ...Event) {
	t.Helper()
	if err := c.Apply(events, rv); err != nil {
		t.Fatalf("Apply(rv %d): %v", rv, err)
	}
}

func MustWatch(t testing.TB, c *Cache, fromRV uint64, sendState bool, p Predicate) *Watcher {
	t.Helper()
	w, err := c.Watch(fromRV, sendState, p)
	if err != nil {
		t.Fatalf("Watch(%d, %v): %v", fromRV, sendState, err)
	}
	t.Cleanup(w.Stop)
	return w
}

func ev(t watch.EventType, o *Object) Event {
	return Event{Type: t, RV: o.RV, Object: o}
}

// drain returns the events queued on w without waiting. Dispatch happens
// inside Apply, so after Apply returns every event is already queued.
func drain(w *Watcher) []Event {
	var out []Event
	for {
		select {
		case e, ok := <-w.ch:
			if !ok {
				return out
			}
			out = append(out, e)
		default:
			return out
		}
	}
}

// MustReceive waits for the next event on w.
func MustReceive(t testing.TB, w *Watcher) Event {
	t.Helper()
	select {
	case e, ok := <-w.Events():
		if !ok {
			t.Fatalf("watcher closed (evicted %v), want an event", w.Evicted())
		}
		return e
	case <-time.After(receiveTimeout):
		t.Fatalf("no event after %v", receiveTimeout)
	}
	return Event{}
}

// isClosed reports whether w's channel is closed, after discarding what is
// queued.
func isClosed(w *Watcher) bool {
	for {
		select {
		case _, ok := <-w.ch:
			if !ok {
				return true
			}
		default:
			return false
		}
	}
}

// summary renders events as "TYPE name rv" for comparisons.
func summary(events []Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		name := "-"
		if e.Object != nil {
			name = e.Object.Name
		}
		out[i] = string(e.Type) + " " + name + " " + strconv.FormatUint(e.RV, 10)
	}
	return out
}

func rvs(events []Event) []uint64 {
	out := make([]uint64, len(events))
	for i, e := range events {
		out[i] = e.RV
	}
	return out
}

func isTooOld(err error) (*TooOldError, bool) {
	var too *TooOldError
	return too, errors.As(err, &too)
}

// listAll lists every object matching p at the cache RV, in one page.
func listAll(c *Cache, p Predicate) ([]*Object, uint64, error) {
	pg, err := c.ListPage(PageOptions{Predicate: p})
	return pg.Objects, pg.RV, err
}
