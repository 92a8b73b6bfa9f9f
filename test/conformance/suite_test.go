//go:build e2e

package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// fixtureNamespace holds the objects request rows read.
const fixtureNamespace = "conf"

// catchUpTimeout bounds the wait until the edge has synced the suite's last
// write to a resource.
const catchUpTimeout = 30 * time.Second

// side is one server under test.
type side struct {
	name   string // "cloud" or "edge"
	base   string // URL without trailing slash
	client *http.Client
}

// suite is the shared cluster and the state rows read.
type suite struct {
	c     *framework.Cluster
	cloud side
	edge  side

	mu sync.Mutex
	// first and last are the RVs of the suite's first and last write to
	// each resource that the edge syncs. Guarded by mu.
	first, last map[string]uint64
	// watchNS maps a watch row's name to its namespace. Guarded by mu.
	watchNS map[string]string
}

func TestConformance(t *testing.T) {
	s := newSuite(t)
	for i, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			switch r.kind {
			case requestRow:
				s.runRequest(t, r)
			case watchRow:
				s.runWatch(t, r, i)
			case kubectlRow:
				s.runKubectl(t, r)
			case informerRow:
				s.runInformer(t, r)
			default:
				t.Fatalf("row kind %d has no runner", r.kind)
			}
		})
	}
}

// newSuite starts the cluster, writes the fixtures and starts the edge.
func newSuite(t *testing.T) *suite {
	t.Helper()
	c := framework.New(t, framework.Options{Namespaces: []string{fixtureNamespace}})
	cloudHTTP, err := rest.HTTPClientFor(c.AdminConfig)
	if err != nil {
		t.Fatalf("admin http client: %v", err)
	}
	s := &suite{
		c:       c,
		cloud:   side{name: "cloud", base: c.CloudURL, client: cloudHTTP},
		edge:    side{name: "edge", base: c.EdgeURL, client: &http.Client{}},
		first:   map[string]uint64{},
		last:    map[string]uint64{},
		watchNS: map[string]string{},
	}
	s.writeFixtures(t)
	c.StartEdge()
	return s
}

// recordWrite notes the RV of a write the edge will sync.
func (s *suite) recordWrite(t *testing.T, resource string, meta metav1.Object) {
	t.Helper()
	rv, err := strconv.ParseUint(meta.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("write of %s %s: resourceVersion %q: %v", resource, meta.GetName(), meta.GetResourceVersion(), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first[resource] == 0 {
		s.first[resource] = rv
	}
	s.last[resource] = max(s.last[resource], rv)
}

// writeFixtures creates what the rows read: configmaps, pods on the edge's
// node and on another, both nodes, a labelled namespace and one namespace
// with a "marker" configmap per watch row.
func (s *suite) writeFixtures(t *testing.T) {
	t.Helper()
	ctx, core, node := t.Context(), s.c.Admin.CoreV1(), s.c.NodeName
	ns, err := core.Namespaces().Get(ctx, fixtureNamespace, metav1.GetOptions{})
	if err == nil {
		ns.Labels = map[string]string{"conformance": "yes"}
		ns, err = core.Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
	}
	mustWrite(t, "label namespace", err)
	s.recordWrite(t, "namespaces", ns)
	for name, labels := range map[string]map[string]string{
		"cm-a": {"app": "a", "tier": "x"},
		"cm-b": {"app": "b", "tier": "y"},
		"cm-c": {"app": "c"},
	} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"k": name}}
		got, err := core.ConfigMaps(fixtureNamespace).Create(ctx, cm, metav1.CreateOptions{})
		mustWrite(t, "create configmap "+name, err)
		s.recordWrite(t, "configmaps", got)
	}
	for name, nodeName := range map[string]string{"pod-edge": node, "pod-edge-2": node, "pod-other": "other-node"} {
		got, err := core.Pods(fixtureNamespace).Create(ctx, fixturePod(name, nodeName), metav1.CreateOptions{})
		mustWrite(t, "create pod "+name, err)
		if nodeName == node {
			s.recordWrite(t, "pods", got)
		}
	}
	for _, name := range []string{node, "other-node"} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"conformance": "yes"}}}
		got, err := core.Nodes().Create(ctx, n, metav1.CreateOptions{})
		mustWrite(t, "create node "+name, err)
		if name == node {
			s.recordWrite(t, "nodes", got)
		}
	}
	s.writeWatchNamespaces(t, ctx)
}

// writeWatchNamespaces gives every watch row a namespace of its own, so the
// changes one row makes never reach another row's watch.
func (s *suite) writeWatchNamespaces(t *testing.T, ctx context.Context) {
	t.Helper()
	core := s.c.Admin.CoreV1()
	for i, r := range rows {
		if r.kind != watchRow || !strings.Contains(r.path, phWatchNS) {
			continue
		}
		name := fmt.Sprintf("conf-watch-%d", i)
		got, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		mustWrite(t, "create namespace "+name, err)
		s.recordWrite(t, "namespaces", got)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "marker", Labels: map[string]string{"w": "yes"}}}
		gotCM, err := core.ConfigMaps(name).Create(ctx, cm, metav1.CreateOptions{})
		mustWrite(t, "create marker in "+name, err)
		s.recordWrite(t, "configmaps", gotCM)
		s.mu.Lock()
		s.watchNS[r.name] = name
		s.mu.Unlock()
	}
}

// fixturePod is a pod bound to nodeName; nothing runs it.
func fixturePod(name, nodeName string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "a"}},
		Spec: corev1.PodSpec{
			NodeName:   nodeName,
			Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}},
		},
	}
}

func mustWrite(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// expand fills in a row's placeholders.
func (s *suite) expand(r row, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.NewReplacer(
		phNamespace, fixtureNamespace,
		phNode, s.c.NodeName,
		phRV, strconv.FormatUint(s.last[r.resource], 10),
		phFirstRV, strconv.FormatUint(s.first[r.resource], 10),
		phWatchNS, s.watchNS[r.name],
	).Replace(text)
}

// catchUp waits until the edge's list RV of the row's resource has reached
// the suite's last write to it, so both sides answer from the same state.
func (s *suite) catchUp(t *testing.T, resource string) {
	t.Helper()
	if resource == "" {
		return
	}
	s.mu.Lock()
	want := s.last[resource]
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(t.Context(), catchUpTimeout)
	defer cancel()
	var got uint64
	for {
		var err error
		got, err = s.edgeListRV(ctx, resource)
		if err == nil && got >= want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("edge %s list RV: got %d (err %v), want >= %d", resource, got, err, want)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// edgeListRV is the resourceVersion of the edge's list of resource.
func (s *suite) edgeListRV(ctx context.Context, resource string) (uint64, error) {
	a, err := do(ctx, s.edge, "/api/v1/"+resource, "", "")
	if err != nil {
		return 0, err
	}
	if a.code != http.StatusOK {
		return 0, fmt.Errorf("list %s: %d %s", resource, a.code, a.message)
	}
	return strconv.ParseUint(a.listRV, 10, 64)
}

// both runs f against the cloud and the edge at once.
func both[T any](f func(side) T, cloud, edge side) (T, T) {
	var c, e T
	var wg sync.WaitGroup
	wg.Go(func() { c = f(cloud) })
	wg.Go(func() { e = f(edge) })
	wg.Wait()
	return c, e
}
