package cloudsync

import (
	"context"
	"fmt"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/relist"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// leanUsable reports whether a relist may try the lean path: the resource
// was synced before (a relist after a 410, after a restart from an expired
// watermark, or after a snapshot restore), its cache is loaded, and the
// cloud and store can serve it.
func (s *Syncer) leanUsable() bool {
	_, keyed := s.cfg.Store.(relist.KeyStore)
	return keyed && s.cfg.Lean != nil && !s.leanOff && s.rv != 0 && s.cfg.Cache.Ready()
}

// relistLean does what relist does while moving only what changed: it
// lists the metadata of every object, compares each resourceVersion and
// UID with the stored key, reads the changed and new objects one by one at
// exactly the list's resourceVersion, and commits and publishes the same
// events a full list would, at the list's resourceVersion. It returns an
// error wrapping relist.ErrFallback, having committed nothing, when the full
// list must be used instead.
func (s *Syncer) relistLean(ctx context.Context) error {
	keys, wm, err := s.cfg.Store.(relist.KeyStore).Keys(ctx, s.key)
	if err != nil {
		return fmt.Errorf("relist: %w", err)
	}
	if wm != s.rv || wm != s.cfg.Cache.RV() {
		return fmt.Errorf("%w: store at %d, cache at %d, syncer at %d", relist.ErrFallback, wm, s.cfg.Cache.RV(), s.rv)
	}
	metas, listRV, err := s.listMeta(ctx)
	if err != nil {
		return err
	}
	s.cfg.Observer.CloudHeard(s.key)
	p, err := relist.Compare(keys, wm, metas, listRV)
	if err != nil {
		return err
	}
	fetched, err := relist.FetchPlan(ctx, s.cfg.Lean, p, listRV)
	if err != nil {
		return err
	}
	s.cfg.Observer.RelistBytes(s.key, rawBytes(fetched))
	stored, err := s.storedBase(ctx, keys, p)
	if err != nil {
		return err
	}
	events, err := diff(stored, fetched, listRV)
	if err != nil {
		return fmt.Errorf("relist: %w", err)
	}
	if !publishable(events, wm) {
		return fmt.Errorf("%w: a changed object is not newer than the watermark %d", relist.ErrFallback, wm)
	}
	return s.commitLean(ctx, events, listRV, len(metas))
}

// listMeta lists the metadata of every object in pages of listPageSize,
// restarting as list does when the cloud expires a continue token. A cloud
// that cannot serve metadata lists turns the lean path off for this run.
func (s *Syncer) listMeta(ctx context.Context) ([]metav1.PartialObjectMetadata, uint64, error) {
	opts := metav1.ListOptions{Limit: listPageSize}
	var items []metav1.PartialObjectMetadata
	var listRV uint64
	for {
		page, err := s.cfg.Lean.ListMeta(ctx, opts)
		if opts.Continue != "" && apierrors.IsResourceExpired(err) {
			items, opts = nil, metav1.ListOptions{Limit: listPageSize}
			continue
		}
		if err != nil {
			if unsupported(err) {
				s.leanOff = true
				return nil, 0, fmt.Errorf("%w: metadata list: %w", relist.ErrFallback, err)
			}
			return nil, 0, fmt.Errorf("metadata list: %w", err)
		}
		if opts.Continue == "" {
			if listRV, err = parseRV(page.ResourceVersion, "metadata list"); err != nil {
				return nil, 0, err
			}
		}
		items = append(items, page.Items...)
		if page.Continue == "" {
			return items, listRV, nil
		}
		opts.Continue = page.Continue
	}
}

// unsupported reports whether err is a cloud's refusal of a metadata list
// as such (not of the request's moment): it does not serve the media type
// or the query.
func unsupported(err error) bool {
	switch apierrors.ReasonForError(err) {
	case metav1.StatusReasonNotAcceptable, metav1.StatusReasonUnsupportedMediaType,
		metav1.StatusReasonBadRequest, metav1.StatusReasonMethodNotAllowed:
		return true
	}
	return false
}

// storedBase returns the stored state diff needs to turn into the listed
// one, in (namespace, name) order: the keys of the changed objects (diff
// reads only their RV) and the whole last state of the gone and re-created
// ones (the DELETED events carry it).
func (s *Syncer) storedBase(ctx context.Context, keys []metastore.Key, p relist.Plan) ([]metastore.Object, error) {
	last, err := s.cfg.Store.(relist.KeyStore).Objects(ctx, s.key, p.Whole)
	if err != nil {
		return nil, fmt.Errorf("relist: %w", err)
	}
	if len(last) != len(p.Whole) {
		return nil, fmt.Errorf("relist: %d of %d deleted objects not stored", len(p.Whole)-len(last), len(p.Whole))
	}
	out := make([]metastore.Object, 0, len(p.Changed)+len(last))
	for _, k := range keys {
		n := metastore.Name{Namespace: k.Namespace, Name: k.Name}
		switch {
		case len(last) > 0 && last[0].Namespace == n.Namespace && last[0].Name == n.Name:
			out, last = append(out, last[0]), last[1:]
		case p.Changed[n]:
			out = append(out, metastore.Object{Namespace: k.Namespace, Name: k.Name, RV: k.RV})
		}
	}
	return out, nil
}

// commitLean makes the events durable at listRV, then visible, as relist
// does with a full list's difference.
func (s *Syncer) commitLean(ctx context.Context, events []versioncache.Event, listRV uint64, listed int) error {
	if err := s.applyStore(ctx, eventOps(events), listRV); err != nil {
		return fmt.Errorf("persist relist: %w", err)
	}
	s.rv = listRV
	s.log.Info("relisted", "objects", listed, "changes", len(events), "rv", listRV, "lean", true)
	if err := s.cfg.Cache.Apply(events, listRV); err != nil {
		s.log.Warn("cache refused relist diff, reloading it from the store", "err", err)
		return s.reloadCache(ctx)
	}
	return nil
}
