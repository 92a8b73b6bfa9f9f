//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// overloadRetryAfter is the Retry-After the overloaded cloud sends.
	overloadRetryAfter = 5 * time.Second
	// overloadFor is how long the cloud answers 429.
	overloadFor = 20 * time.Second
	// retryAfterSlack is how much sooner than Retry-After a repeated
	// request may come: the header has whole seconds and clocks jitter.
	retryAfterSlack = 500 * time.Millisecond
	// overloadRecoveryBound is Retry-After plus the 10 s backoff cap, with
	// 2x headroom.
	overloadRecoveryBound = 2 * (overloadRetryAfter + 10*time.Second)
)

// TestCloudOverloadRetryAfter makes the cloud answer every request of the
// edge with 429 and Retry-After for 20 s, ending the edge's watches, while
// a configmap changes. The edge must not ask again for the same path
// before Retry-After has passed, and it catches up once the cloud answers
// again.
func TestCloudOverloadRetryAfter(t *testing.T) {
	const ns = "overload"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}, OverloadGate: true})
	c.StartEdge()
	ctx := t.Context()
	cms := durFastAdmin(t, c).CoreV1().ConfigMaps(ns)
	createDurConfigMap(ctx, t, cms, "before", "0")
	checkDurEdgeConverges(ctx, t, c, ns)

	start := time.Now()
	c.Overload(overloadRetryAfter)
	createDurConfigMap(ctx, t, cms, "during", "1")
	time.Sleep(time.Until(start.Add(overloadFor)))
	c.EndOverload()
	ended := time.Now()
	caughtUp := waitEdgeEqualsCloud(t, c, ns, overloadRecoveryBound)

	reqs := c.OverloadedRequests()
	byPath := map[string][]time.Time{}
	for _, r := range reqs {
		byPath[r.Path] = append(byPath[r.Path], r.At)
	}
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range byPath {
			if !yield(p) {
				return
			}
		}
	})
	var b strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&b, "\n  %s:", p)
		for i, at := range byPath[p] {
			fmt.Fprintf(&b, " %.1f", at.Sub(start).Seconds())
			if i > 0 {
				if gap := at.Sub(byPath[p][i-1]); gap < overloadRetryAfter-retryAfterSlack {
					t.Errorf("%s asked again %s after a 429 with Retry-After %s", p, gap.Round(time.Millisecond), overloadRetryAfter)
				}
			}
		}
	}
	if len(reqs) == 0 {
		t.Errorf("no request of the edge reached the overloaded cloud: the fault was not injected")
	}
	t.Logf("cloud overload: %d requests answered 429 in %s (Retry-After %s), caught up %s after the cloud answered again; seconds after the overload began, per path:%s",
		len(reqs), overloadFor, overloadRetryAfter, caughtUp.Sub(ended).Round(time.Millisecond), b.String())
}
