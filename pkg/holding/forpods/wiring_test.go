package forpods

import (
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParseCaps(t *testing.T) {
	for _, tc := range []struct {
		name         string
		objects      int
		nsBytes, all string
		want         Caps
		wantErr      string
	}{
		{"defaults", 5000, "64Mi", "256Mi", Caps{NamespaceObjects: 5000, NamespaceBytes: 64 << 20, TotalBytes: 256 << 20}, ""},
		{"zero holds nothing in namespaces", 0, "0", "1k", Caps{TotalBytes: 1000}, ""},
		{"negative objects", -1, "64Mi", "256Mi", Caps{}, "pod-identity-namespace-max-objects must not be negative"},
		{"not a quantity", 1, "lots", "256Mi", Caps{}, `pod-identity-namespace-max-bytes must be a quantity of bytes such as 64Mi, got "lots"`},
		{"negative bytes", 1, "64Mi", "-1", Caps{}, "pod-identity-max-bytes must be a quantity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCaps(tc.objects, tc.nsBytes, tc.all)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("ParseCaps: got %v, want no error", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("ParseCaps: got %v, want an error with %q", err, tc.wantErr)
			}
			if got.NamespaceObjects != tc.want.NamespaceObjects || got.NamespaceBytes != tc.want.NamespaceBytes || got.TotalBytes != tc.want.TotalBytes {
				t.Errorf("ParseCaps: got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestHoldsSecrets(t *testing.T) {
	for _, tc := range []struct {
		resources []string
		want      bool
	}{
		{[]string{"v1/services", "v1/secrets"}, true},
		{[]string{"v1/services", "v1/configmaps"}, false},
		{nil, false},
		{[]string{"example.com/v1/secrets"}, false},
	} {
		if got := HoldsSecrets(tc.resources); got != tc.want {
			t.Errorf("HoldsSecrets(%v): got %v, want %v", tc.resources, got, tc.want)
		}
	}
}

func TestHeldOf(t *testing.T) {
	gvr := func(r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Version: "v1", Resource: r}
	}
	slices := cloudsync.Resource{GVR: schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}, ForPods: true}
	pods := cloudsync.Resource{GVR: gvr("pods"), FieldSelector: "spec.nodeName=n1"}
	services := cloudsync.Resource{GVR: gvr("services")}
	cache := func(r cloudsync.Resource) *versioncache.Cache { return versioncache.New(r.GVR, 1) }

	res := []cloudsync.Resource{services, pods, slices}
	caches := []*versioncache.Cache{cache(services), cache(pods), cache(slices)}
	held, p := HeldOf(res, caches)
	if len(held) != 1 || held[0].Resource.GVR != slices.GVR || held[0].Cache != caches[2] || p != caches[1] {
		t.Errorf("HeldOf: got %d held (%v) and pods %p, want the EndpointSlices' and pods %p", len(held), held, p, caches[1])
	}
	if held, p := HeldOf(res[2:], caches[2:]); held != nil || p != nil {
		t.Errorf("HeldOf without the node's pods: got %v and %p, want nothing", held, p)
	}
}

func TestSplitRestored(t *testing.T) {
	caches := []*versioncache.Cache{
		versioncache.New(schema.GroupVersionResource{Version: "v1", Resource: "services"}, 1),
		versioncache.New(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, 1),
	}
	configured, restored := SplitRestored(caches, 1, []RestoredHolding{{}})
	if len(configured) != 1 || configured[0] != caches[0] || restored[0].Cache != caches[1] {
		t.Errorf("SplitRestored: got %v and %v, want the first cache configured and the second restored", configured, restored)
	}
	if cap(configured) != 1 {
		t.Errorf("SplitRestored: configured's capacity %d, want 1 (an append must not overwrite a restored cache)", cap(configured))
	}
}
