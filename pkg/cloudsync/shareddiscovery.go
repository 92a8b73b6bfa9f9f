package cloudsync

import (
	"golang.org/x/sync/singleflight"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SharedDiscovery returns a Discoverer on d whose concurrent lookups of one
// group/version share one request: at start every sync looks its resource
// up at once, and node scope's four core resources would each GET /api/v1.
// Nothing is kept after a lookup returns, so a resource added to a group
// version later (a CRD's) is found by the next lookup. The list returned
// is shared between the callers of one lookup: read it, do not change it.
func SharedDiscovery(d Discoverer) Discoverer {
	return &sharedDiscovery{next: d}
}

type sharedDiscovery struct {
	next   Discoverer // immutable
	flight singleflight.Group
}

func (s *sharedDiscovery) ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error) {
	v, err, _ := s.flight.Do(groupVersion, func() (any, error) {
		return s.next.ServerResourcesForGroupVersion(groupVersion)
	})
	list, _ := v.(*metav1.APIResourceList)
	return list, err
}
