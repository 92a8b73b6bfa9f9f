package cloudsync

import (
	"math/rand/v2"
	"time"

	"k8s.io/utils/clock"
)

// minEpochWatch is the shortest watch a WatchEpoch gives: a watch opened
// this close to a boundary runs to the next one instead, so that no watch
// is reopened within a minute of its start.
const minEpochWatch = time.Minute

// WatchEpoch gives a set of watches on one connection common deadlines:
// the boundaries origin+k·period, period a random 5 to 10 minutes picked
// once, as client-go's reflector picks each watch's. kube-apiserver sends
// each watch a bookmark about every minute from its start, and 2 s before
// its deadline; watches opened together and ended together get theirs
// together, and kube-apiserver writes them to the connection in one flush
// instead of one each. Watches whose own random timeouts had spread their
// starts cost kube-apiserver's HTTP/2 writes twice the CPU of a kubelet's
// freshly started ones, for the same frames, at 100 nodes. Across nodes
// the origins and periods differ, so the fleet's watches still end spread
// over time.
type WatchEpoch struct {
	clock  clock.PassiveClock
	origin time.Time     // immutable
	period time.Duration // immutable
}

// NewWatchEpoch returns a WatchEpoch whose first boundary is one period
// from now.
func NewWatchEpoch(clk clock.PassiveClock) *WatchEpoch {
	return &WatchEpoch{clock: clk, origin: clk.Now(), period: minWatchTimeout + rand.N(minWatchTimeout)}
}

// Timeout is the timeoutSeconds of a watch opened now: until the next
// boundary at least minEpochWatch away, rounded up to a whole second.
func (e *WatchEpoch) Timeout() int64 {
	now := e.clock.Now()
	next := e.origin.Add((now.Sub(e.origin)/e.period + 1) * e.period)
	if next.Sub(now) < minEpochWatch {
		next = next.Add(e.period)
	}
	return int64((next.Sub(now) + time.Second - 1) / time.Second)
}
