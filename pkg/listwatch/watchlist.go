package listwatch

import (
	"bufio"
	"context"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// initialWriteBuffer is the buffer, in bytes, the initial events of a watch
// are written through: a state of thousands of objects goes out in writes
// of this size rather than one write (a syscall) per event, and no event
// waits for it, since the whole state is already at hand.
const initialWriteBuffer = 64 << 10

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

// writeInitial writes the initial events and, for a WatchList, the bookmark
// ending them, through one buffer that is emptied at the end; the caller
// flushes the response. Live events are written unbuffered and flushed
// per burst (writeAvailable), so they reach the client promptly.
func (ws *watchStream) writeInitial() error {
	initial := ws.watcher.Initial()
	if len(initial) == 0 && !ws.initialEventsEnd {
		return nil
	}
	out := ws.out
	bw := bufio.NewWriterSize(out, initialWriteBuffer)
	ws.out = bw
	defer func() { ws.out = out }()
	for i := range initial {
		if err := ws.writeInitialEvent(&initial[i]); err != nil {
			return err
		}
	}
	if ws.initialEventsEnd {
		if err := ws.writeInitialEventsEnd(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writeInitialEvent writes one initial event. A protobuf one is written as
// the frame's head and the object's cached encoding, since a synthetic
// event's frame is shared with no other watcher and would be a copy.
func (ws *watchStream) writeInitialEvent(ev *versioncache.Event) error {
	if ws.proto == nil || ws.table != nil || ws.partial != nil || ev.Object == nil {
		return ws.write(*ev)
	}
	ws.lastRV = max(ws.lastRV, ev.RV)
	return ws.proto.WriteObjectFrame(ws.out, seeObject(ws.view, ev.Object), ev.Type)
}
