package listwatch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/encode"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Watch stream timing, as kube-apiserver's cacher and watch handler do it.
const (
	// bookmarkInterval is how often a watch that allows bookmarks gets one.
	bookmarkInterval = time.Minute
	// bookmarkBeforeTimeout is how long before the stream's timeout the last
	// bookmark is sent, so the client resumes from a fresh resourceVersion.
	bookmarkBeforeTimeout = 2 * time.Second
	// defaultWatchTimeout is the stream duration when the client sets no
	// timeoutSeconds: kube-apiserver's default --min-request-timeout
	// (1800 s), jittered up to twice that so watches do not all end at once.
	defaultWatchTimeout = 30 * time.Minute
	// maxWatchTimeout caps timeoutSeconds so the deadline stays a valid time.
	maxWatchTimeout = 365 * 24 * time.Hour
	// maxDrainEvents bounds how many immediately available events are
	// written before a flush, so a burst still reaches the client promptly.
	maxDrainEvents = 256
)

// serveWatch streams events from where planWatch starts them. A too old
// RV gets 200 and one ERROR event carrying 410 Expired, and a WatchList
// whose RV the cache does not reach in time one carrying 504 Timeout, as in
// kube-apiserver.
func (s *server) serveWatch(w http.ResponseWriter, r *http.Request, t target, req *listRequest, resp response.Responder) {
	var tbl *encode.Table
	if tt := resp.Table(); tt != nil {
		if tbl = encode.NewTable(tt, t.groupResource()); tbl.Err() != nil {
			resp.Error(w, tbl.Err())
			return
		}
	}
	if err := resp.StreamError(); err != nil {
		resp.Error(w, err)
		return
	}
	start, err := s.planWatch(r.Context(), t, req)
	if err != nil {
		resp.ErrorStream(w, err)
		return
	}
	watcher, err := t.cache.Watch(start.fromRV, start.sendState, req.pred)
	var tooOld *versioncache.TooOldError
	switch {
	case errors.As(err, &tooOld):
		resp.ErrorStream(w, response.CacheError(err))
		return
	case err != nil:
		resp.Error(w, response.CacheError(err))
		return
	}
	defer watcher.Stop()
	resp.StartStream(w)
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil || r.Method == http.MethodHead {
		return
	}
	disarm := s.boundWritesAfterEviction(rc, watcher)
	defer disarm()
	ws := s.newWatchStream(w, rc, watcher, t, req, start, tbl, resp)
	if err := ws.run(r.Context()); err != nil {
		s.log.Debug("watch stream ended", "resource", t.gvr.String(), "error", err)
	}
	if watcher.Evicted() {
		s.log.Info("watcher evicted as too slow", "resource", t.gvr.String(), "lastRV", ws.lastRV)
	}
}

// newWatchStream prepares the stream that writes watcher's events to w.
func (s *server) newWatchStream(w http.ResponseWriter, rc *http.ResponseController, watcher *versioncache.Watcher,
	t target, req *listRequest, start watchStart, tbl *encode.Table, resp response.Responder) *watchStream {
	ws := &watchStream{
		out:      w,
		rc:       rc,
		watcher:  watcher,
		clock:    s.clock,
		deadline: s.clock.Now().Add(watchTimeout(&req.opts, rand.Float64())),
		// A watch from an RV above the cache's already has that RV.
		lastRV:  max(watcher.StartRV(), start.fromRV),
		cacheRV: t.cache.RV,
		proto:   t.proto,
		view:    t.view,
	}
	ws.startRV = ws.lastRV
	if tbl != nil {
		ws.table = encode.NewTableFrames(tbl, s.clock.Now)
	}
	// Like kube's watch encoder, a PartialObjectMetadataList conversion,
	// which no single object takes, leaves the events as they are.
	if p := resp.Partial(); p != nil && !p.List {
		ws.partial = encode.NewPartial(p, resp.MediaType())
		ws.protoFrames = resp.Protobuf()
	}
	if req.opts.AllowWatchBookmarks {
		ws.bookmarks = true
		ws.kind, ws.apiVersion = t.info.Kind, t.apiVersion()
		ws.initialEventsEnd = start.initialEventsEnd
	}
	return ws
}

// watchStream writes one watcher's events to one client. It is used by the
// serving goroutine only.
type watchStream struct {
	out      io.Writer
	rc       *http.ResponseController
	watcher  *versioncache.Watcher
	clock    clock.Clock
	deadline time.Time // the stream ends cleanly here
	// bookmarks: the client allows bookmarks, whose objects are empty
	// objects of kind and apiVersion.
	bookmarks        bool
	kind, apiVersion string
	// initialEventsEnd asks for the WatchList bookmark after the initial
	// events; only set together with bookmarks.
	initialEventsEnd bool
	// lastRV is the highest RV this watch has reached: its start RV, every
	// event and progress marker delivered, and the cache RV at the last
	// bookmark. Bookmarks carry it.
	lastRV uint64
	// startRV is lastRV when the stream started. As in kube's
	// cacheWatcher.process, periodic bookmarks are sent only once lastRV
	// is above it.
	startRV uint64
	// cacheRV reads the cache's RV, which also moves with the events this
	// watch's selector filters out.
	cacheRV func() uint64
	// table encodes events as one-row Tables; nil unless the client asked
	// for Tables.
	table *encode.TableFrames
	// partial converts event objects to PartialObjectMetadata; nil unless
	// the client asked for it.
	partial *encode.Partial
	// protoFrames frames partial's objects in protobuf (also for custom
	// resources, whose own objects are JSON only).
	protoFrames bool
	// proto encodes frames in protobuf; nil for JSON.
	proto *encode.Protobuf
	// view shows the caller the events' objects; nil shows them as cached.
	view ObjectView
}

// run writes the initial events, then live events and bookmarks until the
// client goes away, the watcher closes or the deadline passes.
func (ws *watchStream) run(ctx context.Context) error {
	timeout := ws.clock.NewTimer(ws.deadline.Sub(ws.clock.Now()))
	defer timeout.Stop()
	bookmark := ws.nextBookmark()
	defer func() { stopTimer(bookmark) }()
	if err := ws.writeInitial(); err != nil {
		return err
	}
	if err := ws.rc.Flush(); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timeout.C():
			return nil
		case ev, ok := <-ws.watcher.Events():
			if !ok {
				return nil
			}
			if err := ws.writeAvailable(ev); err != nil {
				return err
			}
		case <-timerC(bookmark):
			if err := ws.bookmark(); err != nil {
				return err
			}
			bookmark = ws.nextBookmark()
		}
	}
}

// writeAvailable writes first and the events already queued behind it,
// then flushes.
func (ws *watchStream) writeAvailable(first versioncache.Event) error {
	if err := ws.write(first); err != nil {
		return err
	}
	if err := ws.drain(); err != nil {
		return err
	}
	return ws.rc.Flush()
}

// drain writes up to maxDrainEvents events that are already queued. A
// closed channel is left for the main loop to see.
func (ws *watchStream) drain() error {
	for range maxDrainEvents {
		select {
		case ev, ok := <-ws.watcher.Events():
			if !ok {
				return nil
			}
			if err := ws.write(ev); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

// write records ev's RV and writes its shared frame. Progress markers (no
// object) only advance the RV.
func (ws *watchStream) write(ev versioncache.Event) error {
	ws.lastRV = max(ws.lastRV, ev.RV)
	if ev.Object == nil {
		return nil
	}
	ev = seeEvent(ws.view, ev)
	if ws.table != nil {
		return ws.table.Write(ws.out, ev.Type, ev.Object.Raw, ev.Object.RV, false)
	}
	if ws.partial != nil {
		return ws.writePartial(ev.Type, ev.Object.Raw)
	}
	if ws.proto != nil {
		b, err := ws.proto.EventFrame(&ev, ev.Type)
		if err != nil {
			return err
		}
		_, err = ws.out.Write(b)
		return err
	}
	_, err := ws.out.Write(ev.Frame(ev.Type))
	return err
}

// bookmark writes a periodic BOOKMARK at the newest RV the watch reached.
// Like kube's, whose bookmarks carry the watch cache's RV, it takes the
// cache RV, so a watch whose selector filters out every change still moves
// on. The events queued up to that RV are written first, so the bookmark
// never passes an unsent event. No bookmark is written while the RV is not
// above the watch's start, nor after the watcher was closed.
func (ws *watchStream) bookmark() error {
	rv := ws.cacheRV()
	// Apply dispatches under the cache lock that RV takes, so every event
	// up to rv for this watcher is queued by now.
	for ws.lastRV < rv {
		select {
		case ev, ok := <-ws.watcher.Events():
			if !ok {
				return nil // the main loop sees the close
			}
			if err := ws.write(ev); err != nil {
				return err
			}
			continue
		default:
		}
		ws.lastRV = rv // nothing up to rv left for this watcher
	}
	if ws.lastRV <= ws.startRV {
		return ws.rc.Flush()
	}
	return ws.writeBookmark()
}

// writeBookmark writes a BOOKMARK carrying lastRV and flushes.
func (ws *watchStream) writeBookmark() error {
	if err := ws.writeBookmarkFrame(false); err != nil {
		return err
	}
	return ws.rc.Flush()
}

// writeBookmarkFrame writes a BOOKMARK whose object is an empty object of
// the kind with only metadata.resourceVersion (lastRV) set and, when
// initialEventsEnd, the annotation k8s.io/initial-events-end: "true", as
// kube-apiserver's cacher sends. A Table watch gets it as a one-row Table,
// as kube's watch encoder converts every event.
func (ws *watchStream) writeBookmarkFrame(initialEventsEnd bool) error {
	if ws.partial != nil {
		return ws.writePartial(watch.Bookmark, encode.BookmarkObject(ws.kind, ws.apiVersion, ws.lastRV, initialEventsEnd))
	}
	if ws.proto != nil {
		b, err := ws.proto.BookmarkFrame(ws.lastRV, initialEventsEnd)
		if err != nil {
			return err
		}
		_, err = ws.out.Write(b)
		return err
	}
	obj := encode.BookmarkObject(ws.kind, ws.apiVersion, ws.lastRV, initialEventsEnd)
	if ws.table != nil {
		return ws.table.Write(ws.out, watch.Bookmark, obj, ws.lastRV, initialEventsEnd)
	}
	frame := append([]byte(`{"type":"BOOKMARK","object":`), obj...)
	_, err := ws.out.Write(append(frame, "}\n"...))
	return err
}

// nextBookmark arms a timer for the next bookmark, or returns nil when
// bookmarks are off or none is due before the deadline.
func (ws *watchStream) nextBookmark() clock.Timer {
	if !ws.bookmarks {
		return nil
	}
	now := ws.clock.Now()
	at, ok := nextBookmarkTime(now, ws.deadline)
	if !ok {
		return nil
	}
	return ws.clock.NewTimer(at.Sub(now))
}

// nextBookmarkTime mirrors kube-apiserver's cacheWatcher.nextBookmarkTime:
// every bookmarkInterval, and once bookmarkBeforeTimeout before the deadline.
func nextBookmarkTime(now, deadline time.Time) (time.Time, bool) {
	heartbeat := now.Add(bookmarkInterval)
	if pre := deadline.Add(-bookmarkBeforeTimeout); pre.After(now) && pre.Before(heartbeat) {
		return pre, true
	}
	return heartbeat, heartbeat.Before(deadline)
}

func timerC(t clock.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C()
}

func stopTimer(t clock.Timer) {
	if t != nil {
		t.Stop()
	}
}

// writePartial writes a frame of type typ whose object is raw's
// PartialObjectMetadata, in the stream's framing.
func (ws *watchStream) writePartial(typ watch.EventType, raw []byte) error {
	obj, err := ws.partial.Object(raw)
	if err != nil {
		return err
	}
	var frame []byte
	if ws.protoFrames {
		if frame, err = response.ProtobufWatchFrame(typ, obj); err != nil {
			return err
		}
	} else {
		frame = append([]byte(`{"type":"`+string(typ)+`","object":`), bytes.TrimRight(obj, "\n")...)
		frame = append(frame, "}\n"...)
	}
	_, err = ws.out.Write(frame)
	return err
}
