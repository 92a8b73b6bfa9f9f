package demand

import (
	"errors"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestSelect(t *testing.T) {
	core := func(resource string, onDemand bool) cloudsync.Resource {
		return cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: resource}, OnDemand: onDemand}
	}
	full := []cloudsync.Resource{core("pods", false), core("nodes", false), core("configmaps", true), core("secrets", true)}
	for _, tc := range []struct {
		name    string
		res     []cloudsync.Resource
		wantOK  bool
		wantErr error
	}{
		{name: "node scope", res: full, wantOK: true},
		{name: "secrets synced whole", res: []cloudsync.Resource{core("pods", false), core("secrets", false)}},
		{name: "no secrets", res: full[:3]},
		{name: "no pods", res: full[1:], wantErr: ErrMissingDependency},
		{name: "nodes held whole for pods besides the node's", res: append(append([]cloudsync.Resource(nil), full...),
			cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, ForPods: true}), wantOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caches := make([]*versioncache.Cache, len(tc.res))
			for i, r := range tc.res {
				caches[i] = versioncache.New(r.GVR, 1)
			}
			cfg, ok, err := Select(Config{}, tc.res, caches)
			if ok != tc.wantOK || !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v, %v, want %v, %v", ok, err, tc.wantOK, tc.wantErr)
			}
			if ok && (cfg.Pods != caches[0] || cfg.Nodes != caches[1] || cfg.ConfigMaps.Cache != caches[2] || cfg.Secrets.Cache != caches[3]) {
				t.Errorf("got caches %p %p %p %p, want them in res's order", cfg.Pods, cfg.Nodes, cfg.ConfigMaps.Cache, cfg.Secrets.Cache)
			}
		})
	}
}
