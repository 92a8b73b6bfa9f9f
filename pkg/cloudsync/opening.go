package cloudsync

import (
	"context"
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

// maxBackgroundOpening is how many of those places requests marked
// Background (reads of objects the node already holds and serves: the
// watches a start resumes, the reads after a restarted cloud's 410) may
// take at once. The rest stay free for what the node waits for: its
// pods, its Node, a new pod's secrets. A fleet restarting together hands
// the cloud a quarter of the burst at a time, so fewer requests share the
// cloud's cores at once and everything else (a new pod's creation, a new
// reference's first read) is answered sooner. What is held is served from
// the store meanwhile, and each watch resumes from its own
// resourceVersion, so a slower resume loses no change.
const maxBackgroundOpening = 2

// backgroundKey marks a request's context as Background.
type backgroundKey struct{}

// Background marks ctx's requests as reads of what the node already holds,
// which take at most maxBackgroundOpening of the places at once.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// IsBackground says whether ctx was marked Background.
func IsBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}

// sendCheckKey carries a request's check before it is sent
// (WithSendCheck).
type sendCheckKey struct{}

// WithSendCheck marks ctx's requests to be checked once they have their
// place, just before they are sent: an error from check drops the request
// unsent and is its error. A request decided against while it waited for
// its place (a start's resume of a point the cloud has since been seen to
// expire) then costs the cloud nothing.
func WithSendCheck(ctx context.Context, check func() error) context.Context {
	return context.WithValue(ctx, sendCheckKey{}, check)
}

// SendCheck runs ctx's check (WithSendCheck), if it has one, as the
// opening limit does once a request has its place.
func SendCheck(ctx context.Context) error {
	if check, ok := ctx.Value(sendCheckKey{}).(func() error); ok {
		return check()
	}
	return nil
}

// openingLimit lets at most cap(slots) requests wait for their response
// headers at once, and at most cap(background) of them Background ones;
// the others wait for a place, or for their context.
type openingLimit struct {
	next       http.RoundTripper
	slots      chan struct{}
	background chan struct{}
}

var _ utilnet.RoundTripperWrapper = (*openingLimit)(nil)

func newOpeningLimit(n, background int) func(http.RoundTripper) http.RoundTripper {
	slots, bg := make(chan struct{}, n), make(chan struct{}, background)
	return func(next http.RoundTripper) http.RoundTripper {
		return &openingLimit{next: next, slots: slots, background: bg}
	}
}

// WrappedRoundTripper implements utilnet.RoundTripperWrapper.
func (o *openingLimit) WrappedRoundTripper() http.RoundTripper { return o.next }

// RoundTrip implements http.RoundTripper. A Background request takes its
// background place before its place, so it never holds a place while
// waiting; a request's check (WithSendCheck) runs once it has both.
func (o *openingLimit) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if IsBackground(ctx) {
		if err := acquire(ctx, o.background); err != nil {
			return nil, err
		}
		defer func() { <-o.background }()
	}
	if err := acquire(ctx, o.slots); err != nil {
		return nil, err
	}
	defer func() { <-o.slots }()
	if err := SendCheck(ctx); err != nil {
		return nil, err
	}
	return o.next.RoundTrip(req)
}

// acquire takes a place in slots, or returns ctx's error once it ends.
func acquire(ctx context.Context, slots chan struct{}) error {
	select {
	case slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
