package listwatch

import "context"

// watchStart is where a watch begins, decided from its options the way
// kube-apiserver's cacher.Watch does.
type watchStart struct {
	// sendState starts with a synthetic ADDED event per current object;
	// otherwise the events after fromRV are replayed.
	sendState bool
	fromRV    uint64
	// initialEventsEnd asks for the BOOKMARK annotated
	// k8s.io/initial-events-end after the initial events (WatchList).
	initialEventsEnd bool
}

// planWatch decides where t's watch starts and waits until the cache is
// fresh enough to start it. An error is a too-large resourceVersion, which
// kube-apiserver reports as an ERROR event on a 200 stream.
//
//   - sendInitialEvents unset (legacy): RV unset or "0" sends the current
//     state; RV N replays the changes after N.
//   - sendInitialEvents=true: the current state at least as new as the
//     requested RV, then (with allowWatchBookmarks) the annotated bookmark.
//     RV unset is a consistent read: it waits, like a get or list with RV
//     unset, for this server's own proxied writes. RV "0" takes any state.
//     RV N waits up to tooLargeRVWait for the cache to reach N.
//   - sendInitialEvents=false: no initial events; RV unset or "0" starts
//     from now, RV N replays the changes after N.
func (s *server) planWatch(ctx context.Context, t target, req *listRequest) (watchStart, error) {
	opts := &req.opts
	switch {
	case opts.SendInitialEvents == nil:
		return watchStart{sendState: req.rv == 0, fromRV: req.rv}, nil
	case *opts.SendInitialEvents:
		if opts.ResourceVersion == "" {
			s.awaitWrites(ctx, t.cache)
		} else if err := s.awaitRV(ctx, t.cache, req.rv); err != nil {
			return watchStart{}, err
		}
		return watchStart{sendState: true, initialEventsEnd: opts.AllowWatchBookmarks}, nil
	case req.rv == 0:
		// "Now" is the newest RV known: the cache's, or a proxied write's
		// the cache has not seen yet (kube takes etcd's current RV).
		return watchStart{fromRV: max(t.cache.RV(), s.writtenRV(t.cache))}, nil
	default:
		return watchStart{fromRV: req.rv}, nil
	}
}

// writeInitialEventsEnd writes the BOOKMARK that ends a WatchList's
// initial events: it carries lastRV (the snapshot RV) and the annotation
// k8s.io/initial-events-end: "true". It is written even without initial
// events, since client-go's reflector is synced only when it arrives.
func (ws *watchStream) writeInitialEventsEnd() error {
	return ws.writeBookmarkFrame(true)
}
