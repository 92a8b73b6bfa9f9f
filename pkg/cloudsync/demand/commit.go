package demand

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand/nodescope"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/watch"
)

// handleUpdate commits what a worker learned, unless the worker was
// stopped since, and then moves the object's resume point to it.
func (d *Holder) handleUpdate(ctx context.Context, u objectUpdate) error {
	if w := d.workers[u.ref]; w == nil || w.gen != u.gen {
		return nil
	}
	if u.typ != watch.Bookmark {
		if err := d.commitUpdate(ctx, u); err != nil {
			return err
		}
	}
	d.noteResume(u.ref, u.rv, u.listed)
	d.cfg.Observer.CloudHeard(d.kind(u.ref.Kind).Resource.Key())
	return nil
}

// heardIdle tells the Observer that each kind nothing is held of is
// current: no watch of it can fall behind.
func (d *Holder) heardIdle() {
	var held [nodescope.ConfigMap + 1]bool
	for r := range d.workers {
		held[r.Kind] = true
	}
	for _, k := range []nodescope.Kind{nodescope.Secret, nodescope.ConfigMap} {
		if !held[k] {
			d.cfg.Observer.CloudHeard(d.kind(k).Resource.Key())
		}
	}
}

// commitUpdate stores and publishes a listed state or a watch event.
func (d *Holder) commitUpdate(ctx context.Context, u objectUpdate) error {
	k := d.kind(u.ref.Kind)
	cur, _, err := k.Cache.Get(u.ref.Namespace, u.ref.Name)
	if err != nil {
		return fmt.Errorf("read %s: %w", k.Resource.Key(), err)
	}
	switch {
	case u.obj == nil || u.typ == watch.Deleted:
		if cur == nil {
			return nil
		}
		return d.remove(ctx, k, cur, u.rv)
	case cur != nil && u.listed && cur.RV >= u.obj.RV && !bytes.Equal(cur.Raw, u.obj.Raw):
		// A list is the cloud's state: one older than what is held and
		// unlike it comes from a cloud whose history went backwards.
	case cur != nil && cur.RV >= u.obj.RV:
		return nil // already held, or an older state
	}
	return d.upsert(ctx, k, cur, u.obj)
}

// upsert stores and publishes a new state of a held object. An object
// whose RV is above the cache's is published as an event. One at or below
// it changed while it was not held (it has just become referenced):
// publishing it as an event would move watchers' RV backwards, so the
// cache's state is replaced at the cache's RV instead, and local watchers
// watch again (the cloud's RVs are never rewritten).
func (d *Holder) upsert(ctx context.Context, k Kind, cur, obj *versioncache.Object) error {
	key := k.Resource.Key()
	cacheRV := k.Cache.RV()
	if obj.RV > cacheRV {
		if err := d.cfg.Store.Apply(ctx, key, []metastore.Op{cloudsync.UpsertOp(obj)}, obj.RV); err != nil {
			return fmt.Errorf("persist %s: %w", key, err)
		}
		typ := watch.Added
		if cur != nil {
			typ = watch.Modified
		}
		if err := k.Cache.Apply([]versioncache.Event{{Type: typ, RV: obj.RV, Object: obj}}, obj.RV); err == nil {
			return nil
		}
		cacheRV = obj.RV
	} else if err := d.cfg.Store.Apply(ctx, key, []metastore.Op{cloudsync.UpsertOp(obj)}, cacheRV); err != nil {
		return fmt.Errorf("persist %s: %w", key, err)
	}
	objs, _, err := k.Cache.List(versioncache.Predicate{})
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	k.Cache.Replace(append(objs, obj), cacheRV) // the later duplicate wins
	return nil
}

// remove deletes a held object from the store and the cache; watchers see
// DELETED at rv, or just above the cache's RV if rv is not after it.
func (d *Holder) remove(ctx context.Context, k Kind, last *versioncache.Object, rv uint64) error {
	key := k.Resource.Key()
	rv = max(rv, k.Cache.RV()+1)
	del := last
	if last.RV != rv {
		var err error
		if del, err = last.WithRV(rv); err != nil {
			return err
		}
	}
	// The delete carries no encoding, so the store does not log it and
	// restarts the resource's event log: the log's earlier events hold the
	// object's bytes, which must leave the disk with it. A local watch
	// resuming from before this point after a restart gets 410 and relists.
	purge := cloudsync.DeleteOp(del)
	purge.Object.Raw = nil
	if err := d.cfg.Store.Apply(ctx, key, []metastore.Op{purge}, rv); err != nil {
		return fmt.Errorf("persist %s: %w", key, err)
	}
	d.scrubDue = true
	if err := k.Cache.Apply([]versioncache.Event{{Type: watch.Deleted, RV: rv, Object: del}}, rv); err != nil {
		return fmt.Errorf("publish %s: %w", key, err)
	}
	return nil
}

// drop removes r, which nothing references any more, if it is held.
func (d *Holder) drop(ctx context.Context, r nodescope.Ref, rv uint64) error {
	if err := d.forgetResume(ctx, r); err != nil {
		return err
	}
	k := d.kind(r.Kind)
	cur, _, err := k.Cache.Get(r.Namespace, r.Name)
	if err != nil || cur == nil {
		return err
	}
	d.log.Info("dropping object no pod references", "kind", r.Kind, "namespace", r.Namespace, "name", r.Name)
	return d.remove(ctx, k, cur, rv)
}

// dropUnreferenced removes every held object that nothing references,
// such as those stored before a restart by pods that have since gone.
func (d *Holder) dropUnreferenced(ctx context.Context, rv uint64) error {
	for _, kind := range []nodescope.Kind{nodescope.Secret, nodescope.ConfigMap} {
		objs, _, err := d.kind(kind).Cache.List(versioncache.Predicate{})
		if err != nil {
			return fmt.Errorf("read %s: %w", d.kind(kind).Resource.Key(), err)
		}
		for _, o := range objs {
			r := nodescope.Ref{Kind: kind, Namespace: o.Namespace, Name: o.Name}
			if d.refs.Has(r) {
				continue
			}
			if err := d.drop(ctx, r, rv); err != nil {
				return err
			}
		}
	}
	return nil
}

// scrubIfDue checkpoints the WAL after deletions. A failed checkpoint is
// retried after scrubRetry; the store's own error is returned only if it
// is closed or broken, which the caller cannot fix either.
func (d *Holder) scrubIfDue(ctx context.Context) error {
	if !d.scrubDue {
		return nil
	}
	if err := d.cfg.Store.Scrub(ctx); err != nil {
		d.log.Warn("scrubbing deleted objects from the WAL failed, will retry", "err", err)
		return nil
	}
	d.scrubDue = false
	return nil
}

// scrubTimer fires when a failed scrub should be retried; nil (never)
// when none is due.
func (d *Holder) scrubTimer() <-chan time.Time {
	if !d.scrubDue {
		return nil
	}
	return d.cfg.Clock.After(scrubRetry)
}

// persistInfo stores a kind's discovery information for offline restarts
// and hands it to its cache.
func persistInfo(ctx context.Context, store Store, k Kind, info versioncache.Info) error {
	if err := cloudsync.SaveInfo(ctx, store, k.Resource, info); err != nil {
		return err
	}
	k.Cache.SetInfo(info)
	return nil
}
