package forpods

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fakeDiscovery answers one group/version.
type fakeDiscovery struct {
	list *metav1.APIResourceList
	err  error
}

func (d fakeDiscovery) ServerResourcesForGroupVersion(string) (*metav1.APIResourceList, error) {
	return d.list, d.err
}

// causeOf runs f with a cancel-cause func and returns the cause it set.
func causeOf(f func(context.CancelCauseFunc)) error {
	ctx, cancel := context.WithCancelCause(context.Background())
	f(cancel)
	if ctx.Err() == nil {
		return nil
	}
	return context.Cause(ctx)
}

// The sync identity's discovery decides whether a custom resource is still
// served: a deleted definition or a version no longer served is gone.
func TestServedCheck(t *testing.T) {
	widget := func(namespaced bool, verbs ...string) *metav1.APIResourceList {
		return &metav1.APIResourceList{APIResources: []metav1.APIResource{{Name: "widgets", Namespaced: namespaced, Kind: "Widget", Verbs: verbs}}}
	}
	notFound := apierrors.NewNotFound(schema.GroupResource{}, "")
	for _, tc := range []struct {
		name     string
		disc     fakeDiscovery
		wantGone bool
	}{
		{"served", fakeDiscovery{list: widget(true, "get", "list", "watch")}, false},
		{"group version gone (CRD deleted)", fakeDiscovery{err: notFound}, true},
		{"resource gone from its group version", fakeDiscovery{list: &metav1.APIResourceList{}}, true},
		{"cluster-scoped", fakeDiscovery{list: widget(false, "list", "watch")}, true},
		{"not watchable", fakeDiscovery{list: widget(true, "list")}, true},
		{"cloud unreachable", fakeDiscovery{err: errors.New("connection refused")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cause := causeOf(func(gone context.CancelCauseFunc) {
				c := servedCheck{disc: tc.disc, res: cloudsync.Resource{GVR: widgetGVR, Namespace: "app"}, gone: gone}
				_, _ = c.ServerResourcesForGroupVersion("example.com/v1")
			})
			if got := errors.Is(cause, ErrGone); got != tc.wantGone {
				t.Errorf("got gone %v (%v), want %v", got, cause, tc.wantGone)
			}
		})
	}
}

// A 404 or 403 of the cloud on a list or watch is gone; anything else is
// retried.
func TestGoneObserver(t *testing.T) {
	gr := schema.GroupResource{Group: "example.com", Resource: "widgets"}
	for _, tc := range []struct {
		name     string
		err      error
		wantGone bool
	}{
		{"404", fmt.Errorf("list: %w", apierrors.NewNotFound(gr, "")), true},
		{"403", apierrors.NewForbidden(gr, "", errors.New("no")), true},
		{"410", apierrors.NewResourceExpired("too old"), false},
		{"503", apierrors.NewServiceUnavailable("later"), false},
		{"connection refused", errors.New("dial tcp: connection refused"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cause := causeOf(func(gone context.CancelCauseFunc) { goneObserver{gone: gone}.CloudError("k", tc.err) })
			if got := errors.Is(cause, ErrGone); got != tc.wantGone {
				t.Errorf("got gone %v, want %v", got, tc.wantGone)
			}
		})
	}
}

// nopStore commits nothing and counts commits.
type nopStore struct{ commits int }

func (s *nopStore) Apply(context.Context, string, []metastore.Op, uint64) error {
	s.commits++
	return nil
}

func (s *nopStore) Reset(context.Context, string, []metastore.Object, uint64) error {
	s.commits++
	return nil
}

func (s *nopStore) Load(context.Context, string) ([]metastore.Object, uint64, error) {
	return nil, 0, nil
}
func (s *nopStore) PutMeta(context.Context, string, []byte) error { return nil }

// A commit past the guard is never written and ends the sync; a batch
// that only shrinks the holding always is.
func TestCapStore(t *testing.T) {
	obj := func(name string, size int) metastore.Object {
		return metastore.Object{Namespace: "app", Name: name, RV: 5, Raw: make([]byte, size)}
	}
	limit := func(objects int) Guard {
		return func(n int, _ int64) error {
			if n > objects {
				return &capError{cap: capObjects}
			}
			return nil
		}
	}
	cache := versioncache.New(cmGVR, 10)
	o, _ := versioncache.NewObject([]byte(`{"metadata":{"namespace":"app","name":"a","resourceVersion":"1"}}`))
	cache.Replace([]*versioncache.Object{o}, 1)
	for _, tc := range []struct {
		name      string
		commit    func(cloudsync.Store) error
		wantWrite bool
	}{
		{"a list within the cap", func(s cloudsync.Store) error {
			return s.Reset(context.Background(), "k", []metastore.Object{obj("a", 10), obj("b", 10)}, 5)
		}, true},
		{"a list past the cap", func(s cloudsync.Store) error {
			return s.Reset(context.Background(), "k", []metastore.Object{obj("a", 10), obj("b", 10), obj("c", 10)}, 5)
		}, false},
		{"a batch adding past the cap", func(s cloudsync.Store) error {
			return s.Apply(context.Background(), "k", []metastore.Op{{Object: obj("b", 1)}, {Object: obj("c", 1)}}, 5)
		}, false},
		{"a batch updating within the cap", func(s cloudsync.Store) error {
			return s.Apply(context.Background(), "k", []metastore.Op{{Object: obj("a", 100)}, {Object: obj("b", 1)}}, 5)
		}, true},
		{"a batch deleting", func(s cloudsync.Store) error {
			return s.Apply(context.Background(), "k", []metastore.Op{{Delete: true, Object: obj("a", 0)}}, 5)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			under := &nopStore{}
			var err error
			cause := causeOf(func(stop context.CancelCauseFunc) { err = tc.commit(guardStore(under, cache, limit(2), stop)) })
			if wrote := under.commits == 1; wrote != tc.wantWrite || (err == nil) != tc.wantWrite {
				t.Fatalf("got written %v, err %v; want written %v", wrote, err, tc.wantWrite)
			}
			if stopped := errors.Is(cause, ErrOverCap); stopped == tc.wantWrite {
				t.Errorf("got the sync stopped %v (%v), want %v", stopped, cause, !tc.wantWrite)
			}
		})
	}
}
