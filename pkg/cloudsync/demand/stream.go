package demand

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand/nodescope"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

var (
	// errStreamRefused means the cloud refused a streaming watch's
	// parameters (400 or 422, as one without the WatchList feature
	// answers): the object is listed instead.
	errStreamRefused = errors.New("cloud refused a streaming watch")
	// errNoInitialEventsEnd means a streaming watch ended before the
	// bookmark that ends its initial events: nothing was learned, and the
	// object's backoff applies before it is streamed again.
	errNoInitialEventsEnd = errors.New("streaming watch ended before its initial events did")
)

// streamOff reports whether the cloud refused a streaming watch of k's
// objects: from then on they are listed and then watched. Safe for
// concurrent use by the workers.
func (d *Holder) streamOff(k nodescope.Kind) bool {
	return d.noStream[k].Load()
}

// streamOptions are a streaming watch's, as client-go's reflector sends
// them (WatchList): the current state as ADDED events, then a bookmark
// annotated metav1.InitialEventsAnnotationKey at the state's
// resourceVersion, then the changes after it, on the same stream. A floor
// asks for a state not older than it, which kube-apiserver's watch cache
// serves as soon as it has reached the floor, as a reflector's relist from
// its last resourceVersion does; none (0) asks for the latest state, read
// as a quorum read would: kube-apiserver first asks etcd for its current
// revision and waits until the cache has reached it.
func streamOptions(floor uint64) metav1.ListOptions {
	timeout := cloudsync.WatchTimeout()
	o := metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks: true, TimeoutSeconds: &timeout}
	if floor > 0 {
		o.ResourceVersion = strconv.FormatUint(floor, 10)
	}
	return o
}

// streamObject reads r's state, not older than floor (see
// streamOptions), with one streaming watch, in place of a LIST, sends it
// to Run's loop as a listed update at the resourceVersion of the bookmark
// that ends the initial events, sets *from to it and returns the watch,
// open, for its changes. It returns a nil watch and nil when ctx ended or
// the worker was stopped.
func (d *Holder) streamObject(ctx context.Context, lw cache.ListerWatcherWithContext, r nodescope.Ref, gen uint64, from *uint64, floor uint64, reached func()) (watch.Interface, error) {
	w, err := lw.WatchWithContext(ctx, streamOptions(floor))
	if err != nil {
		return nil, classifyStream(err)
	}
	reached()
	u, err := initialState(ctx, w.ResultChan())
	if err != nil || ctx.Err() != nil {
		w.Stop()
		return nil, err
	}
	u.ref, u.gen = r, gen
	if !d.send(ctx, u) {
		w.Stop()
		return nil, nil
	}
	*from = u.rv
	return w, nil
}

// initialState reads a streaming watch's initial events, up to the
// bookmark that ends them, as the listed state of at most one object:
// Object nil when it does not exist, RV the bookmark's. A bookmark that
// does not end them tells nothing of the state and is skipped.
func initialState(ctx context.Context, ch <-chan watch.Event) (objectUpdate, error) {
	u := objectUpdate{listed: true}
	for {
		var ev watch.Event
		select {
		case <-ctx.Done():
			return u, nil
		case e, open := <-ch:
			if !open {
				return u, errNoInitialEventsEnd
			}
			ev = e
		}
		switch ev.Type {
		case watch.Error:
			return u, classifyStream(apierrors.FromObject(ev.Object))
		case watch.Bookmark:
			b, err := cloudsync.BookmarkOf(ev.Object)
			if err != nil {
				return u, fmt.Errorf("bookmark: %w", err)
			}
			if b.InitialEventsEnd {
				u.rv = b.RV
				return u, nil
			}
		case watch.Added, watch.Modified:
			o, err := cloudsync.ToObject(ev.Object)
			if err != nil {
				return u, err
			}
			u.obj = o
		case watch.Deleted:
			u.obj = nil
		default:
			return u, fmt.Errorf("unexpected watch event type %q", ev.Type)
		}
	}
}

// classifyStream is cloudsync.Classify for a streaming watch, which a
// cloud that does not serve them refuses as a bad request (400) or an
// invalid one (422): errStreamRefused.
func classifyStream(err error) error {
	if apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) {
		return fmt.Errorf("%w: %w", errStreamRefused, err)
	}
	return cloudsync.Classify("streaming watch", err)
}
