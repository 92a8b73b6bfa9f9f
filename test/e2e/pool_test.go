//go:build e2e

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// poolSettle bounds a daemon's start, an election and a holding's
	// first sync; poolFailover a new leader after one is killed (the
	// Lease's 30 s and a retry's jitter).
	poolSettle   = 90 * time.Second
	poolFailover = 90 * time.Second
	// churnEvery spaces the EndpointSlice updates; churnFor is how long
	// they go on, the leader killed churnKillAfter in.
	churnEvery     = 150 * time.Millisecond
	churnFor       = 12 * time.Second
	churnKillAfter = 4 * time.Second
	// failoverBound is how late a follower may see a change made after
	// the leader was killed: it moves to the cloud or a new leader within.
	failoverBound = 10 * time.Second
	proxyUser     = "system:serviceaccount:kube-system:kube-proxy"
)

// TestPool runs a pool of three daemons on node credentials, each with a
// hollow kube-proxy on its own pod-bound token: one leads, the followers
// read EndpointSlices from its pool door (no cloud watch of their own),
// a tenant's token is refused there, and when the leader is killed during
// EndpointSlice churn the followers miss no change, make no LIST, and a
// new leader takes over.
func TestPool(t *testing.T) {
	c := framework.New(t, framework.Options{NodeCredentials: true, AuditLog: true, Namespaces: []string{poolNS, poolSliceNS}})
	signer := c.StartServingSigner(time.Hour)
	signer.AlsoFor("pool-a", "pool-b", "pool-c")
	createPoolRBAC(t, c)
	var members []*poolMember
	for i, name := range []string{"pool-a", "pool-b", "pool-c"} {
		members = append(members, addPoolMember(t, c, name, "127.0.0."+strconv.Itoa(i+2)))
	}
	createPoolSlice(t, c)
	for _, m := range members {
		m.node.Start()
	}
	for _, m := range members {
		if err := m.node.WaitReady(poolSettle); err != nil {
			t.Fatal(err)
		}
	}
	leader, followers := waitPoolLeader(t, members, nil)
	t.Logf("leader %s", leader.node.Name)
	startPoolProxy(t, leader)
	waitMetric(t, leader.node, regexp.MustCompile(`apiserver_lite_pod_holding_sync_identity\{[^}]*resource="`+regexp.QuoteMeta(slicesKey)+`"`), poolSettle)
	settled := time.Now()
	for _, f := range followers {
		startPoolProxy(t, f)
	}
	for _, f := range followers {
		waitMetric(t, f.node, regexp.MustCompile(regexp.QuoteMeta(`apiserver_lite_pool_upstream{resource="`+slicesKey+`",upstream="pool:`+leader.node.Name+`"} 1`)), poolSettle)
	}
	checkPoolDoor(t, c, leader, followers[0])

	seen := make([]*rvRecorder, len(followers))
	for i, f := range followers {
		seen[i] = watchThrough(t, f)
	}
	killed, updates := churnAndKill(t, c, leader)
	for i, f := range followers {
		if err := seen[i].waitAll(updates, failoverBound); err != nil {
			t.Errorf("%s's kube-proxy: %v", f.node.Name, err)
		}
		if late := seen[i].latest(updates, killed); late > failoverBound {
			t.Errorf("%s's kube-proxy saw a change made after the leader was killed %s late, want within %s", f.node.Name, late, failoverBound)
		}
	}
	newLeader, _ := waitPoolLeader(t, followers, leader)
	if got, want := ptrOr(lease(t, c).Spec.HolderIdentity), newLeader.node.Name+"@"+newLeader.poolAddr; got != want {
		t.Errorf("the Lease's holder is %q, want %q", got, want)
	}
	checkPoolAudit(t, c, followers, settled, killed)
}

// waitPoolLeader waits until members agree on one leader other than
// gone, and returns it and the others.
func waitPoolLeader(t *testing.T, members []*poolMember, gone *poolMember) (*poolMember, []*poolMember) {
	t.Helper()
	deadline := time.Now().Add(poolSettle + poolFailover)
	for time.Now().Before(deadline) {
		var leader *poolMember
		agree := true
		for _, m := range members {
			name, self := leaderOf(t.Context(), m.node)
			if name == "" || (gone != nil && name == gone.node.Name) {
				agree = false
				break
			}
			if self {
				leader = m
			}
			if leader != nil && name != leader.node.Name {
				agree = false
			}
		}
		if agree && leader != nil {
			var others []*poolMember
			for _, m := range members {
				if m != leader {
					others = append(others, m)
				}
			}
			return leader, others
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("no leader the pool agrees on after %s", poolSettle+poolFailover)
	return nil, nil
}

// startPoolProxy starts m's hollow kube-proxy on its pod-bound token.
func startPoolProxy(t *testing.T, m *poolMember) {
	t.Helper()
	m.node.StartHollowProxy(m.node.WriteDoorKubeconfig("kube-proxy", m.proxyToken))
}

// checkPoolDoor reads the leader's pool door as a follower's kube-proxy
// and as a tenant.
func checkPoolDoor(t *testing.T, c *framework.Cluster, leader, follower *poolMember) {
	t.Helper()
	ctx, core := t.Context(), c.Admin.CoreV1()
	tenant, err := core.Pods(poolSliceNS).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "tenant"},
		Spec: corev1.PodSpec{NodeName: follower.node.Name, ServiceAccountName: "tenant",
			Containers: []corev1.Container{{Name: "app", Image: appImage}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	proxyPod, err := core.Pods(systemNS).Get(ctx, follower.proxyPod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.ClusterCA())
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	slicesURL := "https://" + leader.poolAddr + "/apis/discovery.k8s.io/v1/endpointslices"
	for _, tc := range []struct {
		name, url, token string
		want             int
	}{
		{"a follower's kube-proxy, pool audience", slicesURL, poolToken(t, c, systemNS, "kube-proxy", proxyPod), 200},
		{"a tenant, pool audience: RBAC forbids", slicesURL, poolToken(t, c, poolSliceNS, "tenant", tenant), 403},
		{"a tenant's API token: not for this audience", slicesURL, podToken(t, c, poolSliceNS, "tenant", tenant), 401},
		{"secrets are never the pool's", "https://" + leader.poolAddr + "/api/v1/namespaces/" + poolSliceNS + "/secrets",
			poolToken(t, c, systemNS, "kube-proxy", proxyPod), 404},
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, tc.url, nil)
		req.Header.Set("Authorization", "Bearer "+tc.token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s at the pool door: got %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}

// rvRecorder keeps the resourceVersions of the churned slice a watcher
// saw.
type rvRecorder struct {
	mu sync.Mutex
	// rvs are when each resourceVersion was seen. Guarded by mu.
	rvs map[string]time.Time
}

// watchThrough watches EndpointSlices through f's door as its kube-proxy.
func watchThrough(t *testing.T, f *poolMember) *rvRecorder {
	t.Helper()
	cfg, err := f.node.TokenConfig(f.proxyToken)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.DiscoveryV1().EndpointSlices(poolSliceNS).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch through %s: %v", f.node.Name, err)
	}
	t.Cleanup(w.Stop)
	r := &rvRecorder{rvs: map[string]time.Time{}}
	go func() {
		for ev := range w.ResultChan() {
			if s, ok := ev.Object.(*discoveryv1.EndpointSlice); ok && ev.Type == watch.Modified && s.Name == poolSlice {
				r.mu.Lock()
				r.rvs[s.ResourceVersion] = time.Now()
				r.mu.Unlock()
			}
		}
	}()
	return r
}

// latest is the longest a change made after since took to be seen.
func (r *rvRecorder) latest(updates []update, since time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var worst time.Duration
	for _, u := range updates {
		if at, ok := r.rvs[u.rv]; ok && u.at.After(since) && at.Sub(u.at) > worst {
			worst = at.Sub(u.at)
		}
	}
	return worst
}

// waitAll waits until every update's resourceVersion was seen.
func (r *rvRecorder) waitAll(want []update, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		r.mu.Lock()
		var missing []string
		for _, u := range want {
			if _, ok := r.rvs[u.rv]; !ok {
				missing = append(missing, u.rv)
			}
		}
		r.mu.Unlock()
		if len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("missed %d of %d changes (first %s)", len(missing), len(want), missing[0])
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// update is one change of the churned slice: its resourceVersion and when
// the cloud answered it.
type update struct {
	rv string
	at time.Time
}

// churnAndKill updates the slice every churnEvery for churnFor and kills
// the leader churnKillAfter in; it returns when it killed it and every
// update.
func churnAndKill(t *testing.T, c *framework.Cluster, leader *poolMember) (time.Time, []update) {
	t.Helper()
	slices_ := c.Admin.DiscoveryV1().EndpointSlices(poolSliceNS)
	var rvs []update
	var killed time.Time
	start := time.Now()
	for i := 0; time.Since(start) < churnFor; i++ {
		if killed.IsZero() && time.Since(start) >= churnKillAfter {
			killed = time.Now() // before: the followers leave it as it dies
			leader.node.Kill()
		}
		s, err := slices_.Get(t.Context(), poolSlice, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.Annotations = map[string]string{"e2e.apiserver-lite.io/churn": strconv.Itoa(i)}
		if s, err = slices_.Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		rvs = append(rvs, update{rv: s.ResourceVersion, at: time.Now()})
		time.Sleep(churnEvery)
	}
	return killed, rvs
}

// checkPoolAudit reads the cloud's audit log: between settled and killed
// no follower's kube-proxy pod's token watched EndpointSlices at the
// cloud, and from settled on none listed them.
func checkPoolAudit(t *testing.T, c *framework.Cluster, followers []*poolMember, settled, killed time.Time) {
	t.Helper()
	var pods []string
	for _, f := range followers {
		pods = append(pods, f.proxyPod)
	}
	followerAsked := func(e framework.AuditEvent) bool {
		return e.Resource() == "endpointslices" && e.User.Username == proxyUser && slices.Contains(pods, e.PodName())
	}
	var watches, lists int
	for _, e := range c.CloudRequests(func(string) bool { return true }, settled, time.Now()) {
		if !followerAsked(e) {
			continue
		}
		switch {
		case e.Verb == "watch" && e.RequestReceived.Before(killed):
			watches++
			t.Logf("cloud watch before the kill: %s %s %s", e.User.Username, e.PodName(), e.RequestURI)
		case e.Verb == "list":
			lists++
			t.Logf("cloud list: %s %s %s", e.User.Username, e.PodName(), e.RequestURI)
		}
	}
	if watches != 0 || lists != 0 {
		t.Errorf("followers' identities at the cloud: %d EndpointSlice watches while the leader served, %d lists; want 0 and 0", watches, lists)
	}
}

func ptrOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
