package startup

import (
	"fmt"
	"log/slog"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/watch"
)

// Fill fills c from a stored snapshot: the objects at the
// watermark, and the event log as the cache's event ring, so a local
// client watching from an RV inside the log's window before a restart
// resumes with exactly the events it missed. A never-synced snapshot
// (watermark 0) leaves c as it is.
//
// A stored object that does not decode is logged and skipped. A logged
// event that does not decode is logged, and it and the events before it
// are dropped, raising the floor to its RV. If the cache refuses the log,
// the state is loaded without it (watches then resume from the watermark).
func Fill(c *versioncache.Cache, snap metastore.Snapshot, log *slog.Logger) {
	if snap.Watermark == 0 {
		return
	}
	restoreDecoded(c, snap, decodeObjects(snap.Objects, log), log)
}

// restoreDecoded is Fill with snap's objects already decoded.
func restoreDecoded(c *versioncache.Cache, snap metastore.Snapshot, objs []*versioncache.Object, log *slog.Logger) {
	events, floor := decodeEvents(snap.Events, snap.LogFloor, objs, log)
	if err := c.Restore(objs, snap.Watermark, events, floor); err != nil {
		log.Error("cache refused the stored event log; watches resume from the watermark", "err", err)
		c.Replace(objs, snap.Watermark)
	}
}

// objKey names an object within a resource.
type objKey struct{ namespace, name string }

// decodeEvents decodes logged events oldest first. An object version
// that the state or an earlier event already holds is shared, not decoded
// again, so the ring costs no more memory than before the restart.
func decodeEvents(stored []metastore.Event, floor uint64, objs []*versioncache.Object, log *slog.Logger) ([]versioncache.Event, uint64) {
	latest := make(map[objKey]*versioncache.Object, len(objs))
	for _, o := range objs {
		latest[objKey{o.Namespace, o.Name}] = o
	}
	last := map[objKey]*versioncache.Object{} // each key's newest event object so far
	ahead := decodeAhead(stored, latest)
	var out []versioncache.Event
	for i, s := range stored {
		ev, err := decodeEvent(s, latest, last, ahead.obj[i], ahead.prev[i])
		if err != nil {
			log.Error("skipping undecodable logged event and the events before it", "namespace", s.Object.Namespace,
				"name", s.Object.Name, "rv", s.Object.RV, "err", err)
			out, floor = nil, max(floor, s.Object.RV)
			continue
		}
		if ev.RV > floor {
			out = append(out, ev)
		}
	}
	return out, floor
}

// decodeEvent decodes one logged event, reusing the objects in latest (the
// state) and last (earlier events) when they are the same version, and
// records its object in last. obj0 and prev0 are the event's decodings made
// ahead, if any.
func decodeEvent(s metastore.Event, latest, last map[objKey]*versioncache.Object, obj0, prev0 decoded) (versioncache.Event, error) {
	k := objKey{s.Object.Namespace, s.Object.Name}
	obj, err := reuseOrDecode(s.Object.Raw, s.Object.RV, latest[k], obj0)
	if err != nil {
		return versioncache.Event{}, err
	}
	ev := versioncache.Event{Type: watch.EventType(s.Type), RV: obj.RV, Object: obj}
	if s.Prev != nil {
		if ev.Prev, err = reuseOrDecode(s.Prev, 0, last[k], prev0); err != nil {
			return versioncache.Event{}, fmt.Errorf("previous state: %w", err)
		}
	}
	last[k] = obj
	return ev, nil
}

// reuseOrDecode returns have if it is the version raw encodes (rv, or
// have's RV when rv is 0, with the same bytes), else raw's decoding made
// ahead, else decodes raw.
func reuseOrDecode(raw []byte, rv uint64, have *versioncache.Object, ahead decoded) (*versioncache.Object, error) {
	if have != nil && (rv == 0 || have.RV == rv) && string(have.Raw) == string(raw) {
		return have, nil
	}
	if ahead.done {
		return ahead.obj, ahead.err
	}
	return versioncache.NewObject(raw)
}
