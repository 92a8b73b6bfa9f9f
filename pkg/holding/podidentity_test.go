package holding

import (
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
)

func TestPodHeldResources(t *testing.T) {
	pods := []cloudsync.Resource{{GVR: PodsGVR, FieldSelector: "spec.nodeName=n1"}}
	for _, tc := range []struct {
		name    string
		list    []string
		synced  []cloudsync.Resource
		want    []string
		wantErr string
	}{
		{"node scope: what the node's set lacks, and Nodes whole", DefaultPodIdentityResources, NodeResources("n1"),
			[]string{"/v1/endpoints?forPods=true", "discovery.k8s.io/v1/endpointslices?forPods=true", "/v1/namespaces?forPods=true",
				"/v1/nodes?forPods=true", "networking.k8s.io/v1/servicecidrs?forPods=true", "networking.k8s.io/v1/ingressclasses?forPods=true",
				"networking.k8s.io/v1/networkpolicies?forPods=true"}, ""},
		{"pods whole beside the node's, once", []string{"v1/pods", "v1/pods"}, pods, []string{"/v1/pods?forPods=true"}, ""},
		{"secrets held by name are not widened", []string{"v1/secrets", "v1/services"}, NodeResources("n1"), nil, ""},
		{"a whole synced resource is not repeated", []string{"v1/pods"}, []cloudsync.Resource{{GVR: PodsGVR}}, nil, ""},
		{"a duplicate once", []string{"v1/endpoints", "v1/endpoints"}, pods, []string{"/v1/endpoints?forPods=true"}, ""},
		{"none without the node's pods", []string{"v1/endpoints"}, nil, nil, ""},
		{"bad entry", []string{"endpoints"}, pods, nil, "want group/version/resource"},
		{"empty part", []string{"apps//deployments"}, pods, nil, "want group/version/resource"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PodHeldResources(tc.list, tc.synced)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, r := range got {
				keys = append(keys, r.Key())
			}
			if strings.Join(keys, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("got %v, want %v", keys, tc.want)
			}
		})
	}
}
