package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/auth"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// metaDecisions keeps the TLS door's reviewed tokens (by hash) and
// authorization decisions in the metastore's meta table.
type metaDecisions struct{ store *metastore.Store }

var _ auth.DecisionStore = metaDecisions{}

func (s metaDecisions) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := s.store.GetMeta(ctx, key)
	if errors.Is(err, metastore.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func (s metaDecisions) Put(ctx context.Context, key string, value []byte) error {
	return s.store.PutMeta(ctx, key, value)
}

func (s metaDecisions) Delete(ctx context.Context, key string) error {
	return s.store.DeleteMeta(ctx, key)
}

// podLookup finds a pod by namespace, name and uid in the pods cache that
// is not being deleted; with no pods cache no bound token is accepted
// offline.
func podLookup(caches []*versioncache.Cache) auth.PodLookup {
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	var cache *versioncache.Cache
	for _, c := range caches {
		if c.GVR() == pods {
			cache = c
		}
	}
	return func(ns, name, uid string) bool {
		if cache == nil {
			return false
		}
		obj, _, err := cache.Get(ns, name)
		if err != nil || obj == nil {
			return false
		}
		var meta struct {
			Metadata struct {
				UID               string  `json:"uid"`
				DeletionTimestamp *string `json:"deletionTimestamp"`
			} `json:"metadata"`
		}
		return json.Unmarshal(obj.Raw, &meta) == nil && meta.Metadata.UID == uid && meta.Metadata.DeletionTimestamp == nil
	}
}
