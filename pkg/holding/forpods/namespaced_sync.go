package forpods

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/relist"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"golang.org/x/oauth2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
)

// NamespacedCloudSync returns the NamespacedSyncer that lists and watches
// a resource in one namespace through the same path as every other
// resource, on the holding's tokens. The resource is discovered on those
// tokens too (neither the node nor a namespaced Role may read CRDs): a
// group/version or resource the cloud's discovery no longer lists, a
// resource that is not namespaced or not listable and watchable, or a 404
// or 403 on its list or watch ends the sync with ErrGone.
func NamespacedCloudSync(d SyncDeps) NamespacedSyncer {
	return func(ctx context.Context, h Held, tokens oauth2.TokenSource, guard Guard) error {
		cfg := TokenConfig(d.Cloud, d.Conns, tokens)
		raw, err := cloudsync.NewRawClient(cfg)
		if err != nil {
			return err
		}
		meta, err := metadata.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("metadata client: %w", err)
		}
		disc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return fmt.Errorf("discovery client: %w", err)
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		s := cloudsync.New(cloudsync.Config{Resource: h.Resource, ListerWatcher: raw.ListerWatcher(h.Resource),
			Discovery: servedCheck{disc: disc, res: h.Resource, gone: cancel}, Store: guardStore(d.Store, h.Cache, guard, cancel),
			Cache: h.Cache, Link: d.Link, Logger: d.Logger, Observer: goneObserver{next: d.Observer, gone: cancel},
			Lean: cloudsync.NewLeanSource(raw, meta, h.Resource)})
		_ = s.Run(ctx)
		if c := context.Cause(ctx); errors.Is(c, ErrGone) || errors.Is(c, ErrOverCap) {
			return c
		}
		return nil
	}
}

// servedCheck is the cloud's discovery as the sync identity sees it: a
// resource it does not list as namespaced, listable and watchable ends the
// sync as gone.
type servedCheck struct {
	disc cloudsync.Discoverer
	res  cloudsync.Resource
	gone context.CancelCauseFunc
}

func (c servedCheck) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	list, err := c.disc.ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		c.gone(fmt.Errorf("%w: discovery of %s: %v", ErrGone, gv, err))
	}
	if err != nil {
		return nil, err
	}
	for _, r := range list.APIResources {
		if r.Name == c.res.GVR.Resource && r.Namespaced && slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch") {
			return list, nil
		}
	}
	err = fmt.Errorf("%w: discovery of %s lists no namespaced, listable and watchable %s", ErrGone, gv, c.res.GVR.Resource)
	c.gone(err)
	return nil, err
}

// goneObserver ends the sync as gone on a 404 or 403 of the cloud (a
// deleted definition, a version no longer served, a Role taken away),
// and observes everything as next does.
type goneObserver struct {
	next cloudsync.Observer
	gone context.CancelCauseFunc
}

func (o goneObserver) CloudError(key string, err error) {
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) {
		o.gone(fmt.Errorf("%w: %v", ErrGone, err))
	}
	if o.next != nil {
		o.next.CloudError(key, err)
	}
}

func (o goneObserver) Relisted(key, reason string) {
	if o.next != nil {
		o.next.Relisted(key, reason)
	}
}

func (o goneObserver) RelistBytes(key string, n int) {
	if o.next != nil {
		o.next.RelistBytes(key, n)
	}
}

func (o goneObserver) CloudHeard(key string) {
	if o.next != nil {
		o.next.CloudHeard(key)
	}
}

// capStore asks the guard before each commit, with what the holding would
// hold after it, and ends the sync when it refuses: nothing past a cap is
// ever written.
type capStore struct {
	cloudsync.Store
	cache *versioncache.Cache
	guard Guard
	stop  context.CancelCauseFunc
}

// keyedCapStore is a capStore over a store that lean relists read.
type keyedCapStore struct {
	capStore
	relist.KeyStore
}

// guardStore wraps store in a capStore, keeping its lean relists.
func guardStore(store cloudsync.Store, cache *versioncache.Cache, guard Guard, stop context.CancelCauseFunc) cloudsync.Store {
	c := capStore{Store: store, cache: cache, guard: guard, stop: stop}
	if ks, ok := store.(relist.KeyStore); ok {
		return keyedCapStore{capStore: c, KeyStore: ks}
	}
	return c
}

// Reset commits objs as the whole state if the guard allows them.
func (s capStore) Reset(ctx context.Context, resource string, objs []metastore.Object, wm uint64) error {
	var b int64
	for _, o := range objs {
		b += int64(len(o.Raw))
	}
	if err := s.check(len(objs), b); err != nil {
		return err
	}
	return s.Store.Reset(ctx, resource, objs, wm)
}

// Apply commits ops if the guard allows what the holding holds after them;
// a batch that only shrinks it is always allowed.
func (s capStore) Apply(ctx context.Context, resource string, ops []metastore.Op, wm uint64) error {
	st := s.cache.Stats()
	objects, bytes := st.Objects, st.Bytes
	grows := false
	for _, op := range ops {
		prev, _, _ := s.cache.Get(op.Object.Namespace, op.Object.Name)
		if prev != nil {
			objects--
			bytes -= int64(len(prev.Raw))
		}
		if !op.Delete {
			objects++
			bytes += int64(len(op.Object.Raw))
			grows = grows || prev == nil || len(op.Object.Raw) > len(prev.Raw)
		}
	}
	if grows {
		if err := s.check(objects, bytes); err != nil {
			return err
		}
	}
	return s.Store.Apply(ctx, resource, ops, wm)
}

// check asks the guard and ends the sync on a refusal.
func (s capStore) check(objects int, bytes int64) error {
	if err := s.guard(objects, bytes); err != nil {
		s.stop(err)
		return err
	}
	return nil
}
