package cloudsync

import (
	"net/http"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// maxOpening is how many of a RawClient's requests may await the cloud's
// response headers at once. A watch or a list holds its place only until
// its headers arrive, so this paces bursts, not streams: a start resumes
// every held object's watch at once (about 70 at a node with 30 pods),
// and when every node of a fleet starts together the cloud's API Priority
// and Fairness queues overflow and answer 429 (1,636 of them at 100
// nodes), each one a retry after a backoff. With at most 8 waiting per
// node the queues hold a fleet of hundreds, and the cloud serves the
// burst as fast as it can take it.
const maxOpening = 8

// openingLimit lets at most cap(slots) requests wait for their response
// headers at once; the others wait for a place, or for their context.
type openingLimit struct {
	next  http.RoundTripper
	slots chan struct{}
}

var _ utilnet.RoundTripperWrapper = (*openingLimit)(nil)

func newOpeningLimit(n int) func(http.RoundTripper) http.RoundTripper {
	slots := make(chan struct{}, n)
	return func(next http.RoundTripper) http.RoundTripper {
		return &openingLimit{next: next, slots: slots}
	}
}

// WrappedRoundTripper implements utilnet.RoundTripperWrapper.
func (o *openingLimit) WrappedRoundTripper() http.RoundTripper { return o.next }

// RoundTrip implements http.RoundTripper.
func (o *openingLimit) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case o.slots <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	defer func() { <-o.slots }()
	return o.next.RoundTrip(req)
}
