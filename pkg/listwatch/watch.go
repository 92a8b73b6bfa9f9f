package listwatch

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

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

// serveWatch streams events. RV unset or 0 starts with synthetic ADDED
// events for the current state; RV N streams the changes after N. A too old
// RV gets 200 and one ERROR event carrying 410 Expired, as in
// kube-apiserver.
func (s *server) serveWatch(w http.ResponseWriter, r *http.Request, t target, req *listRequest) {
	tbl, err := parseTable(r, t)
	if err != nil {
		writeError(w, err)
		return
	}
	watcher, err := t.cache.Watch(req.rv, req.rv == 0, req.pred)
	var tooOld *versioncache.TooOldError
	switch {
	case errors.As(err, &tooOld):
		startStream(w)
		_, _ = w.Write(errorFrame(cacheError(err)))
		_ = http.NewResponseController(w).Flush()
		return
	case err != nil:
		writeError(w, cacheError(err))
		return
	}
	defer watcher.Stop()
	startStream(w)
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil || r.Method == http.MethodHead {
		return
	}
	ws := &watchStream{
		out:      w,
		rc:       rc,
		watcher:  watcher,
		clock:    s.clock,
		deadline: s.clock.Now().Add(watchTimeout(&req.opts, rand.Float64())),
		// A watch from an RV above the cache's already has that RV.
		lastRV: max(watcher.StartRV(), req.rv),
	}
	if tbl != nil {
		ws.table = &tableFrames{req: tbl, clock: s.clock.Now}
	}
	if req.opts.AllowWatchBookmarks {
		ws.bookmarkHead = bookmarkHead(t.info.Kind, t.apiVersion())
	}
	if err := ws.run(r.Context()); err != nil {
		s.log.Debug("watch stream ended", "resource", t.gvr.String(), "error", err)
	}
	if watcher.Evicted() {
		s.log.Info("watcher evicted as too slow", "resource", t.gvr.String(), "lastRV", ws.lastRV)
	}
}

// startStream writes the headers of a watch response.
func startStream(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", contentTypeJSON)
	h.Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
}

// watchStream writes one watcher's events to one client. It is used by the
// serving goroutine only.
type watchStream struct {
	out          io.Writer
	rc           *http.ResponseController
	watcher      *versioncache.Watcher
	clock        clock.Clock
	deadline     time.Time // the stream ends cleanly here
	bookmarkHead []byte    // nil unless the client allows bookmarks
	// lastRV is the highest RV delivered to this watcher: its start RV,
	// every event and every progress marker. Bookmarks carry it.
	lastRV uint64
	// table encodes events as one-row Tables; nil unless the client asked
	// for Tables.
	table *tableFrames
}

// run writes the initial events, then live events and bookmarks until the
// client goes away, the watcher closes or the deadline passes.
func (ws *watchStream) run(ctx context.Context) error {
	timeout := ws.clock.NewTimer(ws.deadline.Sub(ws.clock.Now()))
	defer timeout.Stop()
	bookmark := ws.nextBookmark()
	defer func() { stopTimer(bookmark) }()
	for _, ev := range ws.watcher.Initial() {
		if err := ws.write(ev); err != nil {
			return err
		}
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
			// Queued events go first, so the bookmark carries their RV.
			if err := ws.drain(); err != nil {
				return err
			}
			if err := ws.writeBookmark(); err != nil {
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

// write records ev's RV and writes its shared frame. Progress markers only
// advance the RV.
func (ws *watchStream) write(ev versioncache.Event) error {
	ws.lastRV = max(ws.lastRV, ev.RV)
	if ev.Type == watch.Bookmark || ev.Object == nil {
		return nil
	}
	if ws.table != nil {
		return ws.table.write(ws.out, ev)
	}
	_, err := ws.out.Write(ev.Frame(ev.Type))
	return err
}

// writeBookmark writes a BOOKMARK carrying lastRV and flushes.
func (ws *watchStream) writeBookmark() error {
	frame := strconv.AppendUint(ws.bookmarkHead[:len(ws.bookmarkHead):len(ws.bookmarkHead)], ws.lastRV, 10)
	frame = append(frame, "\"}}}\n"...)
	if _, err := ws.out.Write(frame); err != nil {
		return err
	}
	return ws.rc.Flush()
}

// nextBookmark arms a timer for the next bookmark, or returns nil when
// bookmarks are off or none is due before the deadline.
func (ws *watchStream) nextBookmark() clock.Timer {
	if ws.bookmarkHead == nil {
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

// bookmarkHead is a BOOKMARK frame up to its resourceVersion value.
func bookmarkHead(kind, apiVersion string) []byte {
	b := []byte(`{"type":"BOOKMARK","object":{"kind":`)
	b = appendJSONString(b, kind)
	b = append(b, `,"apiVersion":`...)
	b = appendJSONString(b, apiVersion)
	return append(b, `,"metadata":{"resourceVersion":"`...)
}

// errorFrame is an ERROR watch event carrying err's Status.
func errorFrame(err error) []byte {
	b := []byte(`{"type":"ERROR","object":`)
	b = append(b, marshalStatus(toStatus(err))...)
	return append(b, "}\n"...)
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
