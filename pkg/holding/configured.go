package holding

import (
	"fmt"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Configured checks the configured resources, each GVR with its version
// and resource named, and configured once (the local API serves one cache
// per GVR), and returns them for node (ForNode: ${NODE_NAME} expanded).
func Configured(res []cloudsync.Resource, node string) ([]cloudsync.Resource, error) {
	seen := map[schema.GroupVersionResource]bool{}
	out := make([]cloudsync.Resource, 0, len(res))
	for i, r := range res {
		if r.GVR.Version == "" || r.GVR.Resource == "" {
			return nil, fmt.Errorf("resources[%d]: version and resource are required", i)
		}
		if seen[r.GVR] {
			return nil, fmt.Errorf("resources[%d]: %s is configured twice", i, r.GVR)
		}
		seen[r.GVR] = true
		out = append(out, ForNode(r, node))
	}
	return out, nil
}
