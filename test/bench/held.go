//go:build e2e

package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// heldMemory is apiserver-lite's memory and disk at one point.
type heldMemory struct {
	Memory
	// heap is the Go heap's live bytes right after a collection.
	heap int64
	// disk is the data dir's size in bytes.
	disk int64
}

// heldSide is one reader count on one side: through apiserver-lite's door
// or straight to the cloud.
type heldSide struct {
	readers int
	// synced is the informer sync of the reader that started last.
	synced time.Duration
	// start is the cloud requests by "verb resource" from that reader's
	// start until the window; perMin the window's requests per minute.
	start  map[string]int
	perMin map[string]float64
	// watches is the cloud's open watches above the side's baseline.
	watches int
	// apiCPU is kube-apiserver's CPU time per minute of the window;
	// apiRSS its VmRSS at the window's end.
	apiCPU time.Duration
	apiRSS int64
	// lite is apiserver-lite's memory at the window's end.
	lite heldMemory
	// updates is the window's EndpointSlice updates; every reader saw
	// them all when delivered is true.
	updates   int
	delivered bool
	// holds is what the last reader holds: services and EndpointSlices.
	holds [2]int
}

// heldResults is everything one held-for-pods run measured.
type heldResults struct {
	cfg     heldConfig
	machine Machine
	// services is the cloud's services (the data set and
	// default/kubernetes); sliceJSON an EndpointSlice's mean JSON bytes.
	services, slices, sliceJSON int
	// base is apiserver-lite before any component read, afterSync right
	// after the first one synced (EndpointSlices just held).
	base, afterSync heldMemory
	// heldResources is apiserver-lite's count of resources held for pods
	// once the first component synced.
	heldResources int
	// lite and direct are one reader, then heldReaders readers.
	lite, direct []heldSide
	reached      []string
	stopped      error
	seedTook     time.Duration
}

// heldRun is the running parts of one run.
type heldRun struct {
	c       *framework.Cluster
	cfg     heldConfig
	tokens  []string
	readers []*Reader
	seq     int // the last churn update's sequence number
}

// runHeld measures what holding EndpointSlices for the node's pods costs
// apiserver-lite and the cloud, one and then heldReaders components
// reading through its door, beside the same components reading the cloud
// directly on the same tokens.
func runHeld(t testing.TB, cfg heldConfig) *heldResults {
	res := &heldResults{cfg: cfg, machine: ReadMachine()}
	c := framework.New(t, framework.Options{NodeCredentials: true, AuditLog: true,
		Namespaces: []string{HeldSystemNS, HeldNamespace},
		CloudArgs:  []string{"--service-cluster-ip-range", HeldServiceCIDR}})
	h := &heldRun{c: c, cfg: cfg}
	res.reached, res.stopped = RunSteps(t, "held", []Step{
		{"data set", func(ctx context.Context) error { return h.seed(ctx, res) }},
		{"apiserver-lite before any component", func(ctx context.Context) error { return h.baseline(ctx, res) }},
		{"components through apiserver-lite", func(ctx context.Context) error { return h.liteSide(ctx, res) }},
		{"components direct", func(ctx context.Context) error { return h.directSide(ctx, res) }},
	})
	stopReaders(h.readers)
	res.machine.LoadEnd = LoadAverage()
	return res
}

// seed creates the components and the services and EndpointSlices.
func (h *heldRun) seed(ctx context.Context, res *heldResults) error {
	admin, err := AdminClient(h.c)
	if err != nil {
		return err
	}
	if h.tokens, err = createComponents(ctx, admin, h.c.NodeName); err != nil {
		return err
	}
	start := time.Now()
	if err := SeedServices(ctx, admin, h.cfg.Services); err != nil {
		return err
	}
	res.seedTook = time.Since(start)
	// kube-apiserver creates default/kubernetes's EndpointSlice on its own
	// schedule after it starts: counted before it exists, the cloud's
	// slices would be one short of what every reader later holds.
	if err := PollUntil(ctx, func() error {
		_, err := admin.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("default/kubernetes's EndpointSlice: %w", err)
	}
	svcs, err := admin.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	res.services = len(svcs.Items)
	sl, err := admin.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	res.slices = len(sl.Items)
	res.sliceJSON, err = sliceJSONBytes(ctx, admin)
	return err
}

// baseline starts apiserver-lite on the node's credentials, lets it
// settle and reads its memory before any component reads through it.
func (h *heldRun) baseline(ctx context.Context, res *heldResults) error {
	h.c.StartEdge()
	time.Sleep(h.cfg.Settle)
	var err error
	res.base, err = h.liteMemory(ctx)
	return err
}

// liteSide starts the components through the door one by one: the first
// starts the holding; memory right after its sync, then a window with
// one and a window with all of them.
func (h *heldRun) liteSide(ctx context.Context, res *heldResults) error {
	door := h.c.DoorConfig()
	edgeNode := func(e framework.AuditEvent) bool {
		return e.User.Username == h.c.EdgeUser() || strings.HasPrefix(e.User.Username, "system:serviceaccount:")
	}
	afterFirst := func() error {
		var err error
		if res.heldResources, err = heldResources(ctx, h.c.EdgeURL); err != nil {
			return err
		}
		res.afterSync, err = h.liteMemory(ctx)
		return err
	}
	var err error
	res.lite, err = h.side(ctx, door, edgeNode, afterFirst)
	stopReaders(h.readers)
	h.readers = nil
	return err
}

// directSide starts the same components on the same tokens straight
// against the cloud.
func (h *heldRun) directSide(ctx context.Context, res *heldResults) error {
	time.Sleep(h.cfg.Settle) // the door readers' watches close
	reader := func(e framework.AuditEvent) bool { return e.UserAgent == heldReaderAgent }
	var err error
	res.direct, err = h.side(ctx, h.c.AdminConfig, reader, nil)
	return err
}

// side starts one reader, measures a window, starts the rest and
// measures another; afterFirst runs once the first has synced. who picks
// the side's requests from the cloud's audit log.
func (h *heldRun) side(ctx context.Context, base *rest.Config, who func(framework.AuditEvent) bool, afterFirst func() error) ([]heldSide, error) {
	watches0, err := OpenWatches(ctx, h.c)
	if err != nil {
		return nil, err
	}
	var out []heldSide
	for _, n := range []int{1, heldReaders} {
		start := time.Now()
		for i := len(h.readers); i < n; i++ {
			r, err := StartReader(ctx, ReaderConfig(base, h.tokens[i]), heldComponents[i].sa)
			if err != nil {
				return out, err
			}
			h.readers = append(h.readers, r)
		}
		if n == 1 && afterFirst != nil {
			if err := afterFirst(); err != nil {
				return out, err
			}
		}
		time.Sleep(h.cfg.Settle)
		s := heldSide{readers: n, synced: h.readers[n-1].synced, start: h.requests(who, start, time.Now())}
		if err := h.window(ctx, &s, who, watches0); err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}

// requests counts the cloud's requests who picks in [start, end) by
// requestKey.
func (h *heldRun) requests(who func(framework.AuditEvent) bool, start, end time.Time) map[string]int {
	return cloudRequestsIn(h.c, who, start, end)
}

// requestKey names an audited request by verb and resource with its
// subresource, or by verb and path for a non-resource URL.
func requestKey(e framework.AuditEvent) string {
	switch {
	case e.Resource() == "":
		path, _, _ := strings.Cut(e.RequestURI, "?")
		return e.Verb + " " + path
	case e.Subresource() != "":
		return e.Verb + " " + e.Resource() + "/" + e.Subresource()
	}
	return e.Verb + " " + e.Resource()
}

// window counts the side's cloud requests, kube-apiserver's CPU and the
// open watches over a window of EndpointSlice churn, then waits until
// every reader has seen the churn and reads memory.
func (h *heldRun) window(ctx context.Context, s *heldSide, who func(framework.AuditEvent) bool, watches0 int) error {
	api, _ := h.c.CloudProcesses()
	seen := make([]int64, len(h.readers))
	for i, r := range h.readers {
		seen[i] = r.updates.Load()
	}
	cpu0, err := ReadCPU(api.Pid())
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, h.cfg.Window)
	defer cancel()
	start := time.Now()
	s.updates, err = churn(wctx, h.c.Admin, h.cfg.Services, h.cfg.UpdatesPerSec, &h.seq)
	if err != nil {
		return err
	}
	end := time.Now()
	cpu1, err := ReadCPU(api.Pid())
	if err != nil {
		return err
	}
	minutes := end.Sub(start).Minutes()
	s.apiCPU = time.Duration(float64(cpu1-cpu0) / minutes)
	s.perMin = map[string]float64{}
	for k, n := range h.requests(who, start, end) {
		s.perMin[k] = float64(n) / minutes
	}
	if s.watches, err = OpenWatches(ctx, h.c); err != nil {
		return err
	}
	s.watches -= watches0
	s.delivered = h.awaitDelivery(ctx, seen, s.updates)
	s.holds[0], s.holds[1] = h.readers[len(h.readers)-1].holds()
	mem, err := ReadMemory(api.Pid())
	if err != nil {
		return err
	}
	s.apiRSS = mem.RSS
	s.lite, err = h.liteMemory(ctx)
	return err
}

// awaitDelivery waits until every reader has seen updates more updates
// than seen records, and reports whether they all did in time.
func (h *heldRun) awaitDelivery(ctx context.Context, seen []int64, updates int) bool {
	ctx, cancel := context.WithTimeout(ctx, heldDeliveryTimeout)
	defer cancel()
	for {
		all := true
		for i, r := range h.readers {
			if r.updates.Load()-seen[i] < int64(updates) {
				all = false
			}
		}
		if all {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(pollEvery):
		}
	}
}
