package demand

import (
	"errors"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Runner holds by reference exactly when res has on-demand secrets and
// their dependencies, and says which one is missing otherwise.
func TestRunner(t *testing.T) {
	raw, err := cloudsync.NewRawClient(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	core := func(resource string, onDemand bool) cloudsync.Resource {
		return cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: resource}, OnDemand: onDemand}
	}
	full := []cloudsync.Resource{core("pods", false), core("nodes", false), core("configmaps", true), core("secrets", true)}
	for _, tc := range []struct {
		name       string
		res        []cloudsync.Resource
		wantRunner bool
		wantErr    error
	}{
		{name: "node scope", res: full, wantRunner: true},
		{name: "cluster scope: secrets synced whole", res: []cloudsync.Resource{core("pods", false), core("secrets", false)}},
		{name: "no secrets", res: full[:3]},
		{name: "no nodes", res: []cloudsync.Resource{full[0], full[2], full[3]}, wantErr: ErrMissingDependency},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caches := make([]*versioncache.Cache, len(tc.res))
			for i, r := range tc.res {
				caches[i] = versioncache.New(r.GVR, 1)
			}
			run, err := Runner(Config{Link: linktest.Up(t)}, raw, tc.res, caches)
			if (run != nil) != tc.wantRunner || !errors.Is(err, tc.wantErr) {
				t.Errorf("got runner %v, %v, want runner %v, %v", run != nil, err, tc.wantRunner, tc.wantErr)
			}
		})
	}
}
