//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// heldWatches is how many watch=yes requests one tenant holds open:
	// more than the door's 400 in-flight slots.
	heldWatches = 450
	// forgedSends is how often one forged token is sent.
	forgedSends = 100
	// maxForgedReviews is how many TokenReviews those sends may cost.
	maxForgedReviews = 3
	// otherTenantBound is how long another tenant's read may take while
	// the forged token is being sent.
	otherTenantBound = time.Second
	// longSelectorBytes is the size of the label selector kube-apiserver
	// answers (it allows 1 MiB of request headers).
	longSelectorBytes = 100 << 10
	tokenReviewsPath  = "/apis/authentication.k8s.io/v1/tokenreviews"
)

// TestDoorsAuthenticate runs apiserver-lite with its default doors on node
// credentials against a Node,RBAC cloud, with the insecure door opened by
// the framework for protocol tests: the kubelet's door is HTTPS and
// authenticates every caller, the insecure door refuses browsers, watches
// are authorized as watches and take no in-flight slot, and the review
// path can be neither flooded nor forced offline.
func TestDoorsAuthenticate(t *testing.T) {
	const ns = "tenant"
	pods := freeLoopbackAddress(t) // the pods' door, on the same chain
	c := framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{ns}, OverloadGate: true,
		EdgeArgs: []string{"--secure-listen-address", pods}})
	pod := createTenant(t, c, ns)
	reader := podToken(t, c, ns, "reader", pod)
	lister := listOnlyToken(t, c, ns)
	c.StartEdge()
	waitTenantRead(t, c, reader, ns)

	t.Run("unauthenticated", func(t *testing.T) {
		if code := doorGet(t, c, c.DoorURL+"/api/v1/namespaces/"+ns+"/configmaps", "", nil); code != http.StatusUnauthorized {
			t.Errorf("no credentials on the kubelet's door: got %d, want 401", code)
		}
		resp, err := http.Get("http://127.0.0.1:" + fmt.Sprint(c.DoorPort) + "/api/v1/namespaces/" + ns + "/configmaps")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode < 400 {
				t.Errorf("plain HTTP to the kubelet's door: got %d %s, want a failure", resp.StatusCode, body)
			}
		}
	})
	t.Run("tenant gets its RBAC, not the node's view", func(t *testing.T) {
		for path, want := range map[string]int{
			"/api/v1/namespaces/" + ns + "/configmaps/tenant-cm":  200,
			"/api/v1/namespaces/" + ns + "/secrets/tenant-secret": 403,
			"/api/v1/pods": 403,
		} {
			if code := doorGet(t, c, c.DoorURL+path, reader, nil); code != want {
				t.Errorf("tenant GET %s: got %d, want %d", path, code, want)
			}
		}
	})
	t.Run("insecure door refuses browsers", func(t *testing.T) { checkBrowsersRefused(t, c, ns) })
	t.Run("watch parameter is a watch", func(t *testing.T) {
		base := c.DoorURL + "/api/v1/namespaces/" + ns + "/configmaps"
		for query, want := range map[string]int{"": 200, "?watch=yes": 403, "?watch=t": 403, "?watch=on": 403} {
			if code := doorGet(t, c, base+query, lister, nil); code != want {
				t.Errorf("list-only token, %q: got %d, want %d", query, code, want)
			}
		}
	})
	t.Run("held watches leave the lease update answered", func(t *testing.T) { checkHeldWatches(t, c, ns, reader) })
	t.Run("forged token", func(t *testing.T) { checkForgedToken(t, c, ns, reader) })
	t.Run("denials are never stored", func(t *testing.T) { checkDenialsNotStored(t, c, ns, reader) })
	t.Run("long label selector", func(t *testing.T) { checkLongSelector(t, c, "https://"+pods, ns, reader) })
	t.Run("review errors while online refuse", func(t *testing.T) {
		c.KillEdge() // the review is then only in the store, not in memory
		c.StartEdge()
		c.FailPath(tokenReviewsPath, http.StatusInternalServerError)
		defer c.FailPath(tokenReviewsPath, 0)
		// The lister's token is bound to no pod: only the cloud can review
		// it. The reader's, bound to a pod on the node, is verified on the
		// node and needs no review.
		if code := doorGet(t, c, c.DoorURL+"/api/v1/namespaces/"+ns+"/configmaps", lister, nil); code != 401 {
			t.Errorf("a reviewed token while the cloud's TokenReview answers 500: got %d, want 401", code)
		}
		if code := doorGet(t, c, c.DoorURL+"/api/v1/namespaces/"+ns+"/configmaps/tenant-cm", reader, nil); code != 200 {
			t.Errorf("a token of the node's pod while the cloud's TokenReview answers 500: got %d, want 200", code)
		}
	})
}

// podToken returns a token of sa bound to pod.
func podToken(t *testing.T, c *framework.Cluster, ns, sa string, pod *corev1.Pod) string {
	t.Helper()
	tr, err := c.Admin.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{
			Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	return tr.Status.Token
}

// listOnlyToken returns the token of a service account that may list
// configmaps in ns but not watch them.
func listOnlyToken(t *testing.T, c *framework.Cluster, ns string) string {
	t.Helper()
	ctx := t.Context()
	mustCreate(t, func() error {
		_, err := c.Admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "lister"}},
			metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := c.Admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "list-only"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}}},
			metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := c.Admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "lister"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "list-only"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "lister", Namespace: ns}}}, metav1.CreateOptions{})
		return err
	})
	tr, err := c.Admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "lister", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	return tr.Status.Token
}

// doorClient is an HTTP/1.1 client trusting apiserver-lite's CA: every
// request it holds open has a connection of its own.
func doorClient(c *framework.Cluster) *http.Client {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.EdgeCA())
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}, MaxConnsPerHost: 0, MaxIdleConnsPerHost: 8}}
}

// doorGet GETs target with token (if any) and extra headers and returns
// the status code.
func doorGet(t *testing.T, c *framework.Cluster, target, token string, hdr map[string]string) int {
	t.Helper()
	code, _ := doorDo(t, doorClient(c), "GET", target, token, hdr)
	return code
}

func doorDo(t *testing.T, client *http.Client, method, target, token string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(body)
}

// waitTenantRead waits until the tenant reads its configmap through the
// kubelet's door.
func waitTenantRead(t *testing.T, c *framework.Cluster, token, ns string) {
	t.Helper()
	target := c.DoorURL + "/api/v1/namespaces/" + ns + "/configmaps/tenant-cm"
	deadline := time.Now().Add(tenantReadTimeout)
	for code := doorGet(t, c, target, token, nil); code != http.StatusOK; code = doorGet(t, c, target, token, nil) {
		if time.Now().After(deadline) {
			t.Fatalf("tenant reads its configmap through the kubelet's door: got %d, want 200", code)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func checkBrowsersRefused(t *testing.T, c *framework.Cluster, ns string) {
	target := c.EdgeURL + "/api/v1/namespaces/" + ns + "/configmaps"
	for name, hdr := range map[string]map[string]string{
		"Origin":         {"Origin": "https://evil.example"},
		"Sec-Fetch-Site": {"Sec-Fetch-Site": "cross-site"},
	} {
		if code, body := doorDo(t, http.DefaultClient, "GET", target, "", hdr); code != http.StatusForbidden {
			t.Errorf("insecure door with %s: got %d %s, want 403", name, code, body)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), "POST", target, strings.NewReader(`{"metadata":{"name":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("insecure door, POST without content type: got %d, want 415", resp.StatusCode)
	}
}

// checkHeldWatches holds heldWatches watch=yes requests of one tenant open
// and then updates the node's Lease as the kubelet does.
func checkHeldWatches(t *testing.T, c *framework.Cluster, ns, token string) {
	ctx := t.Context()
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: c.NodeName, Namespace: "kube-node-lease"}}
	mustCreate(t, func() error {
		_, err := c.Admin.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease, metav1.CreateOptions{})
		return err
	})
	client := doorClient(c)
	var wg sync.WaitGroup
	opened := make(chan int, heldWatches)
	watchCtx, stop := context.WithCancel(ctx)
	defer func() { stop(); wg.Wait() }()
	for range heldWatches {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(watchCtx, "GET",
				c.DoorURL+"/api/v1/namespaces/"+ns+"/configmaps?watch=yes&timeoutSeconds=300", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := client.Do(req)
			if err != nil {
				opened <- 0
				return
			}
			opened <- resp.StatusCode
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	for range heldWatches {
		if code := <-opened; code != http.StatusOK {
			t.Fatalf("a held watch=yes: got %d, want 200 (long-running requests take no in-flight slot)", code)
		}
	}
	kubelet, err := kubernetes.NewForConfig(c.KubeletConfig())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err := kubelet.CoordinationV1().Leases("kube-node-lease").Get(ctx, c.NodeName, metav1.GetOptions{})
	if err == nil {
		now := metav1.NowMicro()
		got.Spec.RenewTime = &now
		_, err = kubelet.CoordinationV1().Leases("kube-node-lease").Update(ctx, got, metav1.UpdateOptions{})
	}
	if err != nil || time.Since(start) > 10*time.Second {
		t.Errorf("the kubelet's lease update with %d watches held: got %v after %s, want success", heldWatches, err, time.Since(start))
	}
}

// checkForgedToken sends one forged token forgedSends times at once and
// counts the TokenReviews that reach the cloud; another tenant's read
// meanwhile is answered promptly.
func checkForgedToken(t *testing.T, c *framework.Cluster, ns, reader string) {
	before := c.GateRequests(tokenReviewsPath)
	forged := reader[:len(reader)-4] + "AAAA"
	client := doorClient(c)
	var wg sync.WaitGroup
	for range forgedSends {
		wg.Go(func() {
			if code, _ := doorDo(t, client, "GET", c.DoorURL+"/api/v1/namespaces/"+ns+"/configmaps", forged, nil); code != 401 {
				t.Errorf("forged token: got %d, want 401", code)
			}
		})
	}
	start := time.Now()
	code := doorGet(t, c, c.DoorURL+"/api/v1/namespaces/"+ns+"/configmaps/tenant-cm", reader, nil)
	took := time.Since(start)
	wg.Wait()
	if code != 200 || took > otherTenantBound {
		t.Errorf("another tenant's read during the forged sends: got %d after %s, want 200 within %s", code, took, otherTenantBound)
	}
	if got := c.GateRequests(tokenReviewsPath) - before; got > maxForgedReviews {
		t.Errorf("one forged token sent %d times made %d TokenReviews, want at most %d", forgedSends, got, maxForgedReviews)
	}
}

// deniedLists is how many denied lists checkDenialsNotStored makes: each
// costs the caller a SubjectAccessReview of a few KiB from its identity's
// review budget (256 KiB of burst, which the earlier cases spend from
// too), and a 429 past it would end the check before it counts.
const deniedLists = 50

// checkDenialsNotStored makes deniedLists denied lists with distinct
// selectors and counts the stored decisions.
func checkDenialsNotStored(t *testing.T, c *framework.Cluster, ns, token string) {
	before := storedDecisions(t, c)
	for i := range deniedLists {
		target := c.DoorURL + "/api/v1/namespaces/" + ns + "/secrets?labelSelector=" + url.QueryEscape(fmt.Sprintf("app=x%d", i))
		if code := doorGet(t, c, target, token, nil); code != http.StatusForbidden {
			t.Fatalf("denied list %d: got %d, want 403", i, code)
		}
	}
	if after := storedDecisions(t, c); after != before {
		t.Errorf("stored decisions: got %d after %d denied lists, want %d (none added)", after, deniedLists, before)
	}
}

func storedDecisions(t *testing.T, c *framework.Cluster) int {
	t.Helper()
	db, err := sql.Open("sqlite3", (&url.URL{Scheme: "file", OmitHost: true, Path: c.EdgeDBPath(), RawQuery: "mode=ro"}).String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM meta WHERE key LIKE 'auth/decision/%'`).Scan(&n); err != nil {
		t.Fatalf("count stored decisions: %v", err)
	}
	return n
}

// checkLongSelector lists with a 100 KB label selector on every door and
// wants a Kubernetes answer.
func checkLongSelector(t *testing.T, c *framework.Cluster, podsDoor, ns, token string) {
	var b strings.Builder
	b.WriteString("app in (")
	for i := 0; b.Len() < longSelectorBytes; i++ {
		fmt.Fprintf(&b, "v%d,", i)
	}
	sel := strings.TrimSuffix(b.String(), ",") + ")"
	query := "?labelSelector=" + url.QueryEscape(sel)
	for door, call := range map[string]func() (int, string){
		"kubelet's door, forwarded as the tenant": func() (int, string) {
			return doorDo(t, doorClient(c), "GET", c.DoorURL+"/api/v1/namespaces/"+ns+"/configmaps"+query, token, nil)
		},
		"pods' door, forwarded as the tenant": func() (int, string) {
			return doorDo(t, doorClient(c), "GET", podsDoor+"/api/v1/namespaces/"+ns+"/configmaps"+query, token, nil)
		},
		"insecure door, held services": func() (int, string) {
			return doorDo(t, http.DefaultClient, "GET", c.EdgeURL+"/api/v1/namespaces/"+ns+"/services"+query, "", nil)
		},
	} {
		code, body := call()
		if code != http.StatusOK || !strings.Contains(body, `List","apiVersion":"v1"`) {
			t.Errorf("%s, LIST with a %d-byte label selector: got %d %.200s, want 200 and a list", door, len(sel), code, body)
		}
	}
}
