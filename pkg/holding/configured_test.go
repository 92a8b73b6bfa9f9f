package holding

import (
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestConfigured(t *testing.T) {
	pods := cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, FieldSelector: "spec.nodeName=" + NodeNameVar}
	leases := cloudsync.Resource{GVR: schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}}
	for _, tc := range []struct {
		name    string
		res     []cloudsync.Resource
		wantSel string
		wantErr string
	}{
		{name: "expanded", res: []cloudsync.Resource{pods, leases}, wantSel: "spec.nodeName=edge-1"},
		{name: "twice", res: []cloudsync.Resource{pods, leases, pods}, wantErr: "resources[2]: /v1, Resource=pods is configured twice"},
		{name: "no version", res: []cloudsync.Resource{{GVR: schema.GroupVersionResource{Resource: "pods"}}}, wantErr: "resources[0]: version and resource are required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Configured(tc.res, "edge-1")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tc.res) || got[0].FieldSelector != tc.wantSel {
				t.Fatalf("got %v, %v; want %d resources, the pods' selector %q", got, err, len(tc.res), tc.wantSel)
			}
		})
	}
}
