package cloudsync

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

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
		if ok && o.RV <= wm && uidOf(h.Raw) != uidOf(o.Raw) {
			return true
		}
	}
	return false
}

// uidOf returns metadata.uid of a JSON object, or "" if it has none.
func uidOf(raw []byte) string {
	var m struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	return m.Metadata.UID
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
