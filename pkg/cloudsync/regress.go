package cloudsync

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/jsonscan"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

// errRegressedElsewhere means another resource's syncer found the cloud's
// history behind the stored one (Link.reportRegressed): this one relists.
var errRegressedElsewhere = errors.New("cloud history behind the stored one for another resource")

// noteRegressed makes the next attempt a relist for a regressed cloud.
// When this syncer found it (found), it tells the others.
func (s *Syncer) noteRegressed(found bool) {
	s.needList = RelistRegressed
	if found {
		s.regressed = s.cfg.Link.ReportRegressed(s.key)
		return
	}
	s.regressed = s.cfg.Link.Regressed()
}

// regressedElsewhere reports whether another syncer reported the cloud
// regressed since this one last looked, and takes the report.
func (s *Syncer) regressedElsewhere() bool {
	select {
	case <-s.regressed:
		s.regressed = s.cfg.Link.Regressed()
		return true
	default:
		return false
	}
}

// regressed reports whether a cloud list contradicts the stored history, as
// after a control plane is restored from an etcd backup or wiped and
// refilled: the list's resourceVersion is behind the watermark wm, or an
// object we hold comes back, at a version the watermark covers, with
// another UID.
func regressed(stored []metastore.Object, wm uint64, listed []*versioncache.Object, listRV uint64) bool {
	if listRV < wm {
		return true
	}
	type key struct{ ns, name string }
	held := make(map[key]metastore.Object, len(stored))
	for _, o := range stored {
		held[key{o.Namespace, o.Name}] = o
	}
	for _, o := range listed {
		h, ok := held[key{o.Namespace, o.Name}]
		if ok && o.RV <= wm && jsonscan.UID(h.Raw) != o.UID {
			return true
		}
	}
	return false
}

// MayHideRestore reports whether a failed attempt may hide a restart of
// the cloud, and so a restore from a backup: anything but a Status the
// cloud answered. A restore restarts kube-apiserver, which drops every
// connection: the link goes down (Link.Outages, which syncOnce watches)
// or some syncer's failure is a transport one; that syncer checks (on its
// next resumed watch that does not answer 410, see vetResume), and
// its report (Link.ReportRegressed) makes every resource relist. The
// Statuses of a running cloud, such as 429 from its priority and fairness
// or 403, are no reason to check again, however many there are.
func MayHideRestore(err error) bool {
	var st apierrors.APIStatus
	return !errors.As(err, &st)
}

// resumeVetWindow is how long a resumed watch's first event is awaited,
// while a check of the cloud's resource version is due (checkRV), before
// the check is made. A cloud that no longer serves the watermark, as a
// restarted one, answers 410 in the response's first frame, and then the
// relist that follows compares the cloud's state with the stored history
// itself: no check is needed. A cloud behind the watermark sends nothing.
// Events wait for the check, so the window delays only the check of a
// watch that has nothing to deliver.
const resumeVetWindow = time.Second

// vetResume makes the check due (checkRV) on a watch just resumed from
// the watermark. It waits up to resumeVetWindow for the first event: an
// ERROR is returned as the watch's error (a 410 relists, and the relist
// checks); any other event, or none, is held while the cloud's resource
// version is read (cloudBehind), and a cloud behind the watermark fails
// with errConflict, as a contradicting event does. It returns the held
// event, if one came, for the caller to take first; ended is set when
// the watch or ctx ended first, with the check still due.
func (s *Syncer) vetResume(ctx context.Context, ch <-chan watch.Event, st stops) (first *watch.Event, ended bool, err error) {
	t := s.cfg.Clock.NewTimer(resumeVetWindow)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, true, nil
	case <-st.dead:
		return nil, true, link.ErrDead
	case <-st.regressed:
		return nil, true, errRegressedElsewhere
	case ev, open := <-ch:
		if !open {
			return nil, true, nil
		}
		if ev.Type == watch.Error {
			return nil, true, Classify("watch event", apierrors.FromObject(ev.Object))
		}
		first = &ev
	case <-t.C():
	}
	s.outagesAtCheck = s.cfg.Link.Outages()
	behind, err := s.cloudBehind(ctx)
	if err != nil {
		return nil, true, err
	}
	s.checkRV = false
	if behind {
		return nil, true, fmt.Errorf("%w: the cloud's resource version is behind the watermark %d", errConflict, s.rv)
	}
	return first, false, nil
}

// cloudBehind reports whether the cloud's current resourceVersion is
// behind the watermark: read after the check became due (rvTicket), with
// a LIST of at most one object, and shared with the other syncers of the
// cloud (Link.CloudRV) where the resource's counter is theirs. A
// watch from a watermark a restored cloud has not reached would wait
// silently until it does, and then miss all before it.
func (s *Syncer) cloudBehind(ctx context.Context) (bool, error) {
	var rv uint64
	var err error
	if sharedRVSpace(s.cfg.Resource.GVR) {
		rv, err = s.cfg.Link.CloudRV(ctx, s.rvTicket, s.readCloudRV)
	} else {
		rv, err = s.readCloudRV(ctx)
	}
	if err != nil {
		return false, fmt.Errorf("check resource version: %w", err)
	}
	if rv < s.rv {
		s.log.Warn("cloud resource version is behind the watermark, relisting", "cloudRV", rv, "rv", s.rv)
	}
	return rv < s.rv, nil
}

// readCloudRV reads the cloud's current resourceVersion with a LIST of at
// most one object of the resource.
func (s *Syncer) readCloudRV(ctx context.Context) (uint64, error) {
	obj, err := s.cfg.ListerWatcher.ListWithContext(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return 0, err
	}
	lm, err := meta.ListAccessor(obj)
	if err != nil {
		return 0, err
	}
	rv, err := strconv.ParseUint(lm.GetResourceVersion(), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("list resourceVersion %q: %w", lm.GetResourceVersion(), err)
	}
	return rv, nil
}

// sharedRVSpace reports whether gvr's resourceVersions are the count that
// a reading of any other such resource tells: those of a built-in group
// (client-go's scheme), kept by kube-apiserver in its one etcd, events
// aside, which --etcd-servers-overrides keeps in an etcd of their own
// where a cluster asks for it. Another group may be served by an
// aggregated API server counting on its own, so its syncer reads its own.
func sharedRVSpace(gvr schema.GroupVersionResource) bool {
	if gvr.Resource == "events" && (gvr.Group == "" || gvr.Group == "events.k8s.io") {
		return false
	}
	return scheme.Scheme.IsGroupRegistered(gvr.Group)
}

// dueCheck makes the next resumed watch check the cloud's resourceVersion
// (checkRV) with a reading begun from now on.
func (s *Syncer) dueCheck() {
	s.checkRV, s.rvTicket = true, s.cfg.Link.RVTicket()
}

// heldWithOtherUID reports whether the cache holds o's name with another
// UID while b deletes nothing of that name: an ADDED the stored history
// cannot explain, since a re-created object is DELETED first.
func (s *Syncer) heldWithOtherUID(b *batch, o *versioncache.Object) bool {
	for _, op := range b.ops {
		if op.Delete && op.Object.Namespace == o.Namespace && op.Object.Name == o.Name {
			return false
		}
	}
	held, _, err := s.cfg.Cache.Get(o.Namespace, o.Name)
	if err != nil || held == nil {
		return false
	}
	return held.UID != o.UID
}

// replaceState makes listed at listRV the whole durable and visible state,
// even below the old watermark. Local watchers are closed by the cache and
// relist, since the resourceVersions they hold are no longer the cloud's.
func (s *Syncer) replaceState(ctx context.Context, listed []*versioncache.Object, listRV uint64) error {
	objs := make([]metastore.Object, len(listed))
	for i, o := range listed {
		objs[i] = storedObject(o)
	}
	if err := s.recordStore(ctx, s.cfg.Store.Reset(ctx, s.key, objs, listRV)); err != nil {
		return fmt.Errorf("persist relist: %w", err)
	}
	s.rv = listRV
	s.cfg.Cache.Replace(listed, listRV)
	s.log.Info("relisted", "objects", len(listed), "rv", listRV, "replaced", true)
	return nil
}
