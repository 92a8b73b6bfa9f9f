//go:build e2e

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// heldOneSettle lets a holding's first list and watch finish before
// memory is read.
const heldOneSettle = 5 * time.Second

// heldOneSpec is one client's holding: the data set, the client's informer
// on a token bound to its pod on the node, and how the report names them.
// TestBenchHeldNamespace (an operator's ConfigMaps) and TestBenchHeldNodes
// (a CNI agent's Nodes) are two of them.
type heldOneSpec struct {
	// test is the Test function, title its section in the log.
	test, title string
	// client is who reads ("the operator"), holding what it makes the
	// node hold ("its ConfigMaps").
	client, holding string
	// resource is the held resource as the cloud's audit log names it;
	// listPath the cloud path that lists what the informer holds.
	resource, listPath string
	namespaces         []string
	begin, end         string
	// extra is what the informer holds beyond the data set: a namespace's
	// kube-root-ca.crt, the node's own Node.
	extra int
	// describe is the report's data set line, without its end.
	describe func(n int) string
	// seed creates n objects and the client, and returns its token.
	seed     func(ctx context.Context, c *framework.Cluster, n int) (string, error)
	informer func(cs kubernetes.Interface) (informers.SharedInformerFactory, cache.SharedIndexInformer)
	// readyz, when set, is the holding's name in the daemon's
	// /readyz?verbose and readyzWant what its line must say.
	readyz, readyzWant string
}

// heldOneResults is what one run of a heldOneSpec measured.
type heldOneResults struct {
	spec    *heldOneSpec
	objects int
	// objectJSON is an object's mean JSON bytes at the cloud.
	objectJSON      int
	base, afterSync heldMemory
	// throughSync and againSync are the informer's sync through the door,
	// first (starting the holding) and again (from it); directSync
	// straight against the cloud.
	throughSync, againSync, directSync time.Duration
	// throughHolds, againHolds and directHolds are what each informer held.
	throughHolds, againHolds, directHolds int
	// throughCloud, againCloud and directCloud are the cloud's requests by
	// verb and resource while each informer started.
	throughCloud, againCloud, directCloud map[string]int
	// readyz is the holding's /readyz?verbose line once it held them.
	readyz  string
	reached []string
	stopped error
}

// Step is one named step of a run.
type Step struct {
	// Name is what the run's log and report call the step.
	Name string
	// Run does the step; an error stops the run.
	Run func(ctx context.Context) error
}

// RunSteps runs steps in order until one fails, and returns the names of
// those that finished and the failure.
func RunSteps(t testing.TB, title string, steps []Step) (reached []string, stopped error) {
	for _, s := range steps {
		t.Logf("%s: %s", title, s.Name)
		if err := s.Run(t.Context()); err != nil {
			return reached, fmt.Errorf("%s: %w", s.Name, err)
		}
		reached = append(reached, s.Name)
	}
	return reached, nil
}

// heldScaledCount is base scaled by BENCH_SCALE, at least 1.
func heldScaledCount(t testing.TB, base float64) int {
	cfg, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	return int(math.Max(1, math.Round(base*float64(cfg.Pods)/basePods)))
}

// runHeldOne measures what holding n objects for the spec's client costs
// apiserver-lite and the cloud, beside the same informer reading the
// cloud directly on the same token.
func runHeldOne(t testing.TB, spec *heldOneSpec, n int) *heldOneResults {
	res := &heldOneResults{spec: spec, objects: n}
	c := framework.New(t, framework.Options{NodeCredentials: true, AuditLog: true, Namespaces: spec.namespaces})
	h := &heldRun{c: c}
	var token string
	res.reached, res.stopped = RunSteps(t, spec.title, []Step{
		{"data set", func(ctx context.Context) (err error) {
			if token, err = spec.seed(ctx, c, n); err != nil {
				return err
			}
			res.objectJSON, err = meanJSON(ctx, c, spec.listPath)
			return err
		}},
		{"apiserver-lite before " + spec.client, func(ctx context.Context) (err error) {
			c.StartEdge()
			time.Sleep(heldOneSettle)
			res.base, err = h.liteMemory(ctx)
			return err
		}},
		{spec.client + " through apiserver-lite", func(ctx context.Context) error { return res.through(ctx, h, token) }},
		{spec.client + " direct", func(ctx context.Context) error {
			var err error
			start := time.Now()
			res.directSync, res.directHolds, err = spec.sync(ctx, c.AdminConfig, token)
			res.directCloud = cloudRequests(c, func(e framework.AuditEvent) bool { return e.UserAgent == heldReaderAgent }, start)
			return err
		}},
	})
	return res
}

// through syncs the client through the door, which starts the holding,
// reads memory, then syncs it again from the holding.
func (r *heldOneResults) through(ctx context.Context, h *heldRun, token string) error {
	edge := func(e framework.AuditEvent) bool {
		return e.User.Username == h.c.EdgeUser() || strings.HasPrefix(e.User.Username, "system:serviceaccount:")
	}
	start := time.Now()
	var err error
	if r.throughSync, r.throughHolds, err = r.spec.sync(ctx, h.c.DoorConfig(), token); err != nil {
		return err
	}
	time.Sleep(heldOneSettle)
	r.throughCloud = cloudRequests(h.c, edge, start)
	if r.afterSync, err = h.liteMemory(ctx); err != nil {
		return err
	}
	if r.spec.readyz != "" {
		if r.readyz, err = readyzHeldLine(ctx, h.c.EdgeURL, r.spec.readyz); err != nil {
			return err
		}
	}
	start = time.Now()
	r.againSync, r.againHolds, err = r.spec.sync(ctx, h.c.DoorConfig(), token)
	r.againCloud = cloudRequests(h.c, edge, start)
	return err
}

// cloudRequests counts the cloud's requests who picks since start.
func cloudRequests(c *framework.Cluster, who func(framework.AuditEvent) bool, start time.Time) map[string]int {
	return cloudRequestsIn(c, who, start, time.Now())
}

// cloudRequestsIn counts the cloud's requests who picks in [start, end)
// by requestKey.
func cloudRequestsIn(c *framework.Cluster, who func(framework.AuditEvent) bool, start, end time.Time) map[string]int {
	out := map[string]int{}
	for _, e := range c.CloudRequests(func(string) bool { return true }, start, end) {
		if who(e) {
			out[requestKey(e)]++
		}
	}
	return out
}

// sync runs the spec's informer on token against base's host until it
// synced, and returns how long that took and how many objects it held.
func (s *heldOneSpec) sync(ctx context.Context, base *rest.Config, token string) (time.Duration, int, error) {
	cs, err := kubernetes.NewForConfig(ReaderConfig(base, token))
	if err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, informerSyncTimeout)
	defer cancel()
	f, inf := s.informer(cs)
	start := time.Now()
	f.Start(ctx.Done())
	defer f.Shutdown()
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, informerPollEvery, true, func(context.Context) (bool, error) {
		return inf.HasSynced(), nil
	}); err != nil {
		return 0, 0, fmt.Errorf("informer not synced within %s: %w", informerSyncTimeout, err)
	}
	return time.Since(start), len(inf.GetStore().ListKeys()), nil
}

// meanJSON is the mean JSON size of the items the cloud lists at path.
func meanJSON(ctx context.Context, c *framework.Cluster, path string) (int, error) {
	raw, err := c.Admin.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", path, err)
	}
	var list struct{ Items []json.RawMessage }
	if err := json.Unmarshal(raw, &list); err != nil {
		return 0, fmt.Errorf("list %s: %w", path, err)
	}
	n := 0
	for _, it := range list.Items {
		n += len(it)
	}
	return n / max(1, len(list.Items)), nil
}

// readyzHeldLine returns the daemon's /readyz?verbose line on whom
// resource is held for, or an error when there is none.
func readyzHeldLine(ctx context.Context, base, resource string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz?verbose", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("apiserver-lite readyz: %w", err)
	}
	defer resp.Body.Close()
	var body strings.Builder
	if _, err := io.Copy(&body, resp.Body); err != nil {
		return "", fmt.Errorf("apiserver-lite readyz: %w", err)
	}
	for line := range strings.Lines(body.String()) {
		if _, rest, ok := strings.Cut(line, readyzHeldCheck); ok && strings.HasPrefix(rest, resource+" ") {
			return strings.TrimSpace(line), nil
		}
	}
	return "", fmt.Errorf("apiserver-lite readyz: no %s%s line", readyzHeldCheck, resource)
}

// readyzHeldCheck starts the /readyz?verbose check that says for whom a
// resource is held for pods.
const readyzHeldCheck = "held-for-pods:"
