package holding

import (
	"encoding/json"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// HeldPod finds a pod by namespace, name and uid in the node's pods cache
// (the first of caches) that is not being deleted; with no pods cache no
// bound token is accepted offline. A whole copy of every pod held for
// pods comes after the node's and is never consulted: only a pod on this
// node may be a caller's.
func HeldPod(caches []*versioncache.Cache) func(namespace, name, uid string) bool {
	var cache *versioncache.Cache
	for _, c := range caches {
		if c.GVR() == PodsGVR && cache == nil {
			cache = c
		}
	}
	return func(ns, name, uid string) bool {
		if cache == nil {
			return false
		}
		obj, _, err := cache.Get(ns, name)
		if err != nil || obj == nil || obj.UID != uid {
			return false
		}
		var meta struct {
			Metadata struct {
				DeletionTimestamp *string `json:"deletionTimestamp"`
			} `json:"metadata"`
		}
		return json.Unmarshal(obj.Raw, &meta) == nil && meta.Metadata.DeletionTimestamp == nil
	}
}
