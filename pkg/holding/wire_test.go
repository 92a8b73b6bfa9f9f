package holding

import (
	"context"
	"log/slog"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Cluster scope holds what is configured; node scope holds its own set,
// whatever is configured, without waiting for the cloud.
func TestScoped(t *testing.T) {
	configured := []cloudsync.Resource{{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}}
	cloud := &rest.Config{Host: "https://cloud.invalid"}
	for _, tc := range []struct {
		want, wantScope string
		wantRes         []cloudsync.Resource
	}{
		{want: ScopeCluster, wantScope: ScopeCluster, wantRes: configured},
		{want: ScopeNode, wantScope: ScopeNode, wantRes: NodeResources("n1")},
	} {
		t.Run(tc.want, func(t *testing.T) {
			scope, res, _, err := Scoped(context.Background(), tc.want, "n1", configured, cloud, nil, slog.New(slog.DiscardHandler))
			if err != nil || scope != tc.wantScope || len(res) != len(tc.wantRes) || res[0].GVR != tc.wantRes[0].GVR {
				t.Fatalf("got %q, %v, %v; want %q with %v", scope, res, err, tc.wantScope, tc.wantRes)
			}
		})
	}
}
