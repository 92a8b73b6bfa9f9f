//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// crashRounds is how many times apiserver-lite is SIGKILLed mid-sync.
	crashRounds = 24
	// crashMaxUptime bounds the random time apiserver-lite runs, syncing
	// the churn, before each kill.
	crashMaxUptime = 1200 * time.Millisecond
	// churnWorkers write configmaps concurrently, each on its own names.
	churnWorkers = 3
	// churnNamesPerWorker bounds the configmaps each worker cycles through,
	// so the state stays small while every object is created, updated and
	// deleted many times.
	churnNamesPerWorker = 12
	// configMapsKey is cloudsync's Resource.Key of the default configmaps
	// resource (core group, every namespace, no selector).
	configMapsKey = "/v1/configmaps"
	// crashConvergeTimeout bounds the final catch-up of the edge with the
	// cloud once the churn stopped.
	crashConvergeTimeout = time.Minute
)

// TestCrashConsistency SIGKILLs apiserver-lite at random moments while a
// stream of configmap creates, updates and deletes runs in the cloud. After
// every kill its SQLite file must pass integrity_check and hold exactly the
// cloud's state at the stored watermark; then it restarts and resumes.
func TestCrashConsistency(t *testing.T) {
	const ns = "crash"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}})
	c.StartEdge()
	ctx := t.Context()

	seed := uint64(time.Now().UnixNano())
	t.Logf("random seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed>>1))
	churn := startDurChurn(t, c, ns, seed)

	var first, last uint64
	advanced := 0
	for round := range crashRounds {
		time.Sleep(time.Duration(rng.Int64N(int64(crashMaxUptime))))
		c.KillEdge()
		wm := checkDurStoreMatchesCloud(t, c, round)
		if t.Failed() {
			churn.stop()
			return
		}
		if round == 0 {
			first = wm
		} else if wm > last {
			advanced++
		}
		last = wm
		c.StartEdge()
	}
	writes := churn.stop()
	t.Logf("%d kills, %d cloud writes, watermark %d -> %d, advanced in %d rounds", crashRounds, writes, first, last, advanced)
	if advanced < crashRounds/2 {
		t.Errorf("the stored watermark advanced in %d of %d rounds, want at least %d: the kills did not land mid-sync", advanced, crashRounds-1, crashRounds/2)
	}
	checkDurEdgeConverges(ctx, t, c, ns)
}

// checkDurStoreMatchesCloud reads apiserver-lite's SQLite file after a
// kill and compares the configmaps stored at its watermark W, object by
// object, with the cloud's LIST at resourceVersion=W (Exact). It returns W.
func checkDurStoreMatchesCloud(t *testing.T, c *framework.Cluster, round int) uint64 {
	t.Helper()
	ctx := t.Context()
	st, err := c.ReadEdgeStore(ctx, configMapsKey)
	if err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	if st.Integrity != "ok" {
		t.Errorf("round %d: PRAGMA integrity_check: got %q, want ok", round, st.Integrity)
	}
	if !st.HasWatermark {
		t.Fatalf("round %d: no watermark stored for %s", round, configMapsKey)
	}
	rv := strconv.FormatUint(st.Watermark, 10)
	list, err := c.Admin.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{
		ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact,
	})
	if err != nil {
		t.Fatalf("round %d: cloud list at exact watermark %s: %v", round, rv, err)
	}
	if list.ResourceVersion != rv {
		t.Errorf("round %d: cloud list RV: got %s, want %s", round, list.ResourceVersion, rv)
	}
	want := map[string]corev1.ConfigMap{}
	for _, cm := range list.Items {
		want[cm.Namespace+"/"+cm.Name] = cm
	}
	for _, o := range st.Objects {
		key := o.Namespace + "/" + o.Name
		cloud, ok := want[key]
		delete(want, key)
		if !ok {
			t.Errorf("round %d: edge stores %s (rv %d) at watermark %s, the cloud had no such object then", round, key, o.RV, rv)
			continue
		}
		compareDurStored(t, round, o, cloud)
	}
	for key, cm := range want {
		t.Errorf("round %d: cloud had %s (rv %s) at %s, the edge store lacks it", round, key, cm.ResourceVersion, rv)
	}
	return st.Watermark
}

// compareDurStored compares one stored row with the cloud's object.
func compareDurStored(t *testing.T, round int, o framework.StoredObject, cloud corev1.ConfigMap) {
	t.Helper()
	key := o.Namespace + "/" + o.Name
	var got corev1.ConfigMap
	if err := json.Unmarshal(o.Raw, &got); err != nil {
		t.Errorf("round %d: stored %s does not decode: %v", round, key, err)
		return
	}
	if got.ResourceVersion != strconv.FormatUint(o.RV, 10) {
		t.Errorf("round %d: stored %s: rv column %d, object rv %s", round, key, o.RV, got.ResourceVersion)
	}
	if got.ResourceVersion != cloud.ResourceVersion || got.UID != cloud.UID {
		t.Errorf("round %d: stored %s: got rv %s uid %s, cloud has rv %s uid %s",
			round, key, got.ResourceVersion, got.UID, cloud.ResourceVersion, cloud.UID)
	}
	if !maps.Equal(got.Data, cloud.Data) {
		t.Errorf("round %d: stored %s data: got %v, cloud has %v", round, key, got.Data, cloud.Data)
	}
}

// checkDurEdgeConverges waits until the edge serves exactly the cloud's
// configmaps of ns (names, RVs and data).
func checkDurEdgeConverges(ctx context.Context, t *testing.T, c *framework.Cluster, ns string) {
	t.Helper()
	edge := c.EdgeClient()
	out, err := eventually(ctx, crashConvergeTimeout, func() (string, error) {
		cloud, err := c.Admin.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", err
		}
		local, err := edge.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", err
		}
		want, got := durConfigMapStates(cloud.Items), durConfigMapStates(local.Items)
		if !maps.Equal(got, want) {
			return fmt.Sprintf("edge %v\ncloud %v", got, want), errors.New("edge differs from the cloud")
		}
		return "", nil
	})
	if err != nil {
		t.Errorf("edge never converged with the cloud: %v\n%s", err, out)
	}
}

// durConfigMapStates maps name to "rv data" for comparison.
func durConfigMapStates(items []corev1.ConfigMap) map[string]string {
	out := make(map[string]string, len(items))
	for _, cm := range items {
		out[cm.Name] = cm.ResourceVersion + " " + fmt.Sprint(cm.Data)
	}
	return out
}

// durChurn is a stream of configmap writes through the admin client.
type durChurn struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	writes atomic.Int64
	t      *testing.T

	mu sync.Mutex
	// err is the first unexpected write error. Guarded by mu.
	err error
}

// startDurChurn starts churnWorkers goroutines that create, patch and
// delete configmaps in ns as fast as the cloud takes them.
func startDurChurn(t *testing.T, c *framework.Cluster, ns string, seed uint64) *durChurn {
	t.Helper()
	cs := durFastAdmin(t, c) // the stream should be heavy
	ctx, cancel := context.WithCancel(t.Context())
	ch := &durChurn{cancel: cancel, t: t}
	for w := range churnWorkers {
		ch.wg.Add(1)
		go ch.run(ctx, cs, ns, w, rand.New(rand.NewPCG(seed, uint64(w))))
	}
	return ch
}

// stop ends the churn, fails the test on a write error and returns how many
// writes the cloud accepted.
func (ch *durChurn) stop() int64 {
	ch.cancel()
	ch.wg.Wait()
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.err != nil {
		ch.t.Errorf("churn: %v", ch.err)
	}
	return ch.writes.Load()
}

// run writes until ctx ends: a missing name is created, an existing one is
// patched three times out of four and otherwise deleted.
func (ch *durChurn) run(ctx context.Context, cs kubernetes.Interface, ns string, worker int, rng *rand.Rand) {
	defer ch.wg.Done()
	cms := cs.CoreV1().ConfigMaps(ns)
	exists := map[string]bool{}
	for n := 0; ctx.Err() == nil; n++ {
		name := fmt.Sprintf("churn-%d-%d", worker, rng.IntN(churnNamesPerWorker))
		value := strconv.Itoa(n)
		var err error
		switch {
		case !exists[name]:
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"n": value}}
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
			exists[name] = err == nil || apierrors.IsAlreadyExists(err)
		case rng.IntN(4) > 0:
			patch := fmt.Sprintf(`{"data":{"n":%q}}`, value)
			_, err = cms.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		default:
			err = cms.Delete(ctx, name, metav1.DeleteOptions{})
			exists[name] = false
		}
		if err == nil {
			ch.writes.Add(1)
			continue
		}
		if ctx.Err() == nil && !apierrors.IsAlreadyExists(err) {
			ch.mu.Lock()
			if ch.err == nil {
				ch.err = fmt.Errorf("worker %d write %s: %w", worker, name, err)
			}
			ch.mu.Unlock()
			return
		}
	}
}
