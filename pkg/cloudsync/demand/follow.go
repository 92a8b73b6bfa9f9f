package demand

import (
	"context"
	"errors"
	"fmt"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand/nodescope"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/watch"
)

// follower watches one local cache (pods or the node) from its state, and
// watches again from the state when the cache ends the watch (a Replace
// or an eviction), so no change is ever missed.
type follower struct {
	cache *versioncache.Cache
	node  bool // the cache holds the node, not pods
	w     *versioncache.Watcher
}

// rewatch registers a fresh state watch and returns its initial events.
func (f *follower) rewatch() ([]versioncache.Event, error) {
	if f.w != nil {
		f.w.Stop()
	}
	w, err := f.cache.Watch(0, true, versioncache.Predicate{})
	if errors.Is(err, versioncache.ErrClosed) {
		return nil, errStopped
	}
	if err != nil {
		return nil, fmt.Errorf("watch local cache: %w", err)
	}
	f.w = w
	return w.Initial(), nil
}

// loop follows the pods and the node and applies the updates of the
// per-object watches until ctx ends or a local cache closes.
func (d *Holder) loop(ctx context.Context) error {
	pods := &follower{cache: d.cfg.Pods}
	node := &follower{cache: d.cfg.Nodes, node: true}
	defer func() {
		for _, f := range []*follower{pods, node} {
			if f.w != nil {
				f.w.Stop()
			}
		}
	}()
	for _, f := range []*follower{pods, node} {
		if err := d.resync(ctx, f); err != nil {
			return d.stopped(err)
		}
	}
	heard := d.cfg.Clock.NewTimer(heardEvery)
	defer heard.Stop()
	d.heardIdle()
	for {
		var err error
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-pods.w.Events():
			err = d.follow(ctx, pods, ev, ok)
		case ev, ok := <-node.w.Events():
			err = d.follow(ctx, node, ev, ok)
		case u := <-d.updates:
			err = d.handleUpdate(ctx, u)
		case <-heard.C():
			d.heardIdle()
			heard.Reset(heardEvery)
		case <-d.scrubTimer():
		case <-d.resumeDue():
			err = d.flushResume(ctx)
		case <-d.regressed:
			err = d.relistAll(ctx)
		}
		if err == nil {
			err = d.scrubIfDue(ctx)
		}
		if err != nil {
			return d.stopped(err)
		}
	}
}

// stopped maps the end of a followed cache (shutdown) to nil.
func (d *Holder) stopped(err error) error {
	if errors.Is(err, errStopped) {
		return nil
	}
	return err
}

// follow applies one event of f's watch; a closed watch resyncs.
func (d *Holder) follow(ctx context.Context, f *follower, ev versioncache.Event, open bool) error {
	if !open {
		return d.resync(ctx, f)
	}
	switch ev.Type {
	case watch.Added, watch.Modified:
		return d.setOwner(ctx, ev.Object, f.node, ev.RV)
	case watch.Deleted:
		return d.dropOwner(ctx, ownerOf(ev.Object, f.node), ev.RV)
	}
	return nil // progress marker
}

// resync rebuilds the references of f's owners from the cache's state and
// drops held objects that nothing references any more.
func (d *Holder) resync(ctx context.Context, f *follower) error {
	initial, err := f.rewatch()
	if err != nil {
		return err
	}
	rv := f.w.StartRV()
	seen := map[nodescope.Owner]bool{}
	for _, ev := range initial {
		seen[ownerOf(ev.Object, f.node)] = true
		if err := d.setOwner(ctx, ev.Object, f.node, rv); err != nil {
			return err
		}
	}
	for o := range d.owners {
		if o.Node == f.node && !seen[o] {
			if err := d.dropOwner(ctx, o, rv); err != nil {
				return err
			}
		}
	}
	return d.dropUnreferenced(ctx, rv)
}

func ownerOf(o *versioncache.Object, node bool) nodescope.Owner {
	return nodescope.Owner{Node: node, Namespace: o.Namespace, Name: o.Name}
}

// setOwner records the references of a pod or the node; rv is the RV of
// the change, the earliest a dropped object may be deleted at.
func (d *Holder) setOwner(ctx context.Context, o *versioncache.Object, node bool, rv uint64) error {
	refs, err := objectRefs(o, node)
	if err != nil {
		// The cloud validated the object, so this is a local fault; the
		// owner keeps its previous references.
		d.log.Warn("cannot read references", "namespace", o.Namespace, "name", o.Name, "err", err)
		return nil
	}
	owner := ownerOf(o, node)
	added, removed := d.refs.Update(owner, refs)
	if len(refs) > 0 {
		d.owners[owner] = true
	} else {
		delete(d.owners, owner)
	}
	return d.changeRefs(ctx, added, removed, rv)
}

func (d *Holder) dropOwner(ctx context.Context, owner nodescope.Owner, rv uint64) error {
	delete(d.owners, owner)
	return d.changeRefs(ctx, nil, d.refs.Remove(owner), rv)
}

// changeRefs starts watching added objects and drops removed ones.
func (d *Holder) changeRefs(ctx context.Context, added, removed []nodescope.Ref, rv uint64) error {
	for _, r := range added {
		d.startWorker(ctx, r)
	}
	for _, r := range removed {
		d.stopWorker(r)
		if err := d.drop(ctx, r, rv); err != nil {
			return err
		}
	}
	return nil
}

// objectRefs returns the references of a pod or node, decoding only the
// fields that name them.
func objectRefs(o *versioncache.Object, node bool) ([]nodescope.Ref, error) {
	if node {
		return nodescope.NodeRefsJSON(o.Raw)
	}
	return nodescope.PodRefsJSON(o.Raw)
}
