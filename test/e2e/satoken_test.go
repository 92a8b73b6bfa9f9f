//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// keysReadTimeout bounds how long the daemon takes to read the cloud's
	// service-account keys after its start (it retries every 10 s until its
	// pods are synced and it can mint a token to read them with).
	keysReadTimeout = time.Minute
	// componentsRunFor is how long kube-proxy and CoreDNS keep running
	// through the daemon after both synced, with a tenant's requests on
	// top, before the audit log is read.
	componentsRunFor = 30 * time.Second
	// tenantRequestInterval spaces the tenant's requests meanwhile.
	tenantRequestInterval = time.Second
	// jwksPath is where the cloud publishes its service-account keys.
	jwksPath = "/openid/v1/jwks"
	// ownAudience is a projected token's audience of its own.
	ownAudience = "vault.example"
	// apiAudience is the e2e cloud's API audience (its issuer, as it sets
	// no --api-audiences).
	apiAudience = "https://kubernetes.default.svc"
)

// TestServiceAccountTokensVerifiedOnNode: the daemon verifies its own pods'
// service-account tokens itself. From the first use of kube-proxy's and
// CoreDNS's pod-bound tokens on, while both run through the daemon and a
// tenant sends requests, the cloud receives no TokenReview from the node.
// The identity the daemon builds (read from the SubjectAccessReviews it
// sends) equals the cloud's TokenReview for an automounted token, a
// projected token with an audience of its own, and a token bound to no
// pod. Offline, a live pod's token the daemon never saw is accepted, and a
// deleted pod's token and a token bound to a pod on another node get 401.
func TestServiceAccountTokensVerifiedOnNode(t *testing.T) {
	c := framework.New(t, framework.Options{NodeCredentials: true, AuditLog: true, AuditSARBodies: true, EdgeArgs: []string{"--log-level", "debug"},
		Namespaces: []string{systemNS, heldNS}})
	f := createHeldFixture(t, c)
	c.StartEdge()
	waitKeysRead(t, c)
	t.Run("no TokenReview for the node's pods", func(t *testing.T) { checkNoTokenReviews(t, c, f) })
	t.Run("identity equals TokenReview's", func(t *testing.T) { checkIdentities(t, c) })
	t.Run("offline", func(t *testing.T) { checkOfflineTokens(t, c) })
}

// waitKeysRead waits until the cloud's audit log shows a successful read
// of its keys by the daemon (as the node or on a token it minted).
func waitKeysRead(t *testing.T, c *framework.Cluster) {
	t.Helper()
	_, err := eventually(t.Context(), keysReadTimeout, func() (string, error) {
		for _, e := range c.CloudRequests(fromNodeOrPods(c), time.Time{}, time.Now().Add(time.Hour)) {
			if e.RequestURI == jwksPath && e.ResponseStatus != nil && e.ResponseStatus.Code == http.StatusOK {
				return "", nil
			}
		}
		return "", fmt.Errorf("no successful GET %s in the audit log", jwksPath)
	})
	if err != nil {
		t.Fatalf("within %s: %v\n%s", keysReadTimeout, err, c.EdgeProcess().Tail(40))
	}
}

func fromNodeOrPods(c *framework.Cluster) func(string) bool {
	return func(user string) bool {
		return user == c.EdgeUser() || strings.HasPrefix(user, "system:serviceaccount:")
	}
}

// checkNoTokenReviews runs kube-proxy and CoreDNS through the daemon, and
// the tenant's requests, and wants no TokenReview from the node meanwhile.
func checkNoTokenReviews(t *testing.T, c *framework.Cluster, f heldFixture) {
	start := time.Now()
	c.StartHollowProxy(c.WriteDoorKubeconfig("kube-proxy", f.proxyToken))
	waitProxySynced(t, c, f)
	dns := c.StartCoreDNS(c.WriteDoorKubeconfig("coredns", f.dnsToken))
	waitResolves(t, c, dns, f)
	client := doorClient(c)
	for end := time.Now().Add(componentsRunFor); time.Now().Before(end); time.Sleep(tenantRequestInterval) {
		if code, body := doorDo(t, client, "GET", c.DoorURL+"/api/v1/namespaces/"+heldNS+"/configmaps", f.tenantToken, nil); code != http.StatusForbidden {
			t.Fatalf("tenant without RBAC: got %d %.200s, want 403", code, body)
		}
	}
	if n := tokenReviews(c, start); n != 0 {
		t.Errorf("TokenReviews from the node while its pods' tokens were used: got %d, want 0\n%s", n,
			grepLines(c.EdgeProcess().Tail(100000), "not verified on the node"))
	}
}

// tokenReviews counts the TokenReviews the node sent since since.
func tokenReviews(c *framework.Cluster, since time.Time) int {
	n := 0
	for _, e := range c.CloudRequests(func(u string) bool { return u == c.EdgeUser() }, since, time.Now().Add(time.Minute)) {
		if e.Resource() == "tokenreviews" {
			n++
		}
	}
	return n
}

// checkIdentities uses three tokens of a new pod's service account once
// each through the daemon and compares the identity of the
// SubjectAccessReview it sent with the cloud's TokenReview of the token.
func checkIdentities(t *testing.T, c *framework.Cluster) {
	pod := createPod(t, c, heldNS, "tenant", "whoami", c.NodeName)
	waitEdgeHasPod(t, c, heldNS, pod.Name, true)
	for _, tc := range []struct {
		name string
		spec authenticationv1.TokenRequestSpec
		// local is whether the daemon verifies the token itself (no
		// TokenReview), as for any token bound to one of its pods.
		local bool
	}{
		{"automounted", authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3607)), BoundObjectRef: podRef(pod)}, true},
		{"projected with its own audience", authenticationv1.TokenRequestSpec{Audiences: []string{ownAudience, apiAudience},
			BoundObjectRef: podRef(pod)}, true},
		{"bound to no pod", authenticationv1.TokenRequestSpec{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token := requestToken(t, c, heldNS, "tenant", tc.spec)
			since := time.Now()
			path := "/api/v1/namespaces/" + heldNS + "/configmaps/" + tc.name[:4]
			if code, body := doorDo(t, doorClient(c), "GET", c.DoorURL+path, token, nil); code != http.StatusForbidden {
				t.Fatalf("GET %s: got %d %.200s, want 403 (authenticated, no RBAC)", path, code, body)
			}
			if got := tokenReviews(c, since); (got == 0) != tc.local {
				t.Errorf("TokenReviews from the node for the token: got %d, want verified on the node %v", got, tc.local)
			}
			got := sarUser(t, c, since, "JTI="+jtiOf(t, token))
			want := cloudReview(t, c, token)
			if got.User != want.Username || got.UID != want.UID || !reflect.DeepEqual(got.Groups, want.Groups) ||
				!reflect.DeepEqual(got.Extra, toSARExtra(want.Extra)) {
				t.Errorf("identity the daemon asked about:\n got %+v\nwant %+v (TokenReview)", got, want)
			}
		})
	}
	t.Run("only its own audience", func(t *testing.T) {
		token := requestToken(t, c, heldNS, "tenant", authenticationv1.TokenRequestSpec{Audiences: []string{ownAudience},
			BoundObjectRef: podRef(pod)})
		code, body := doorDo(t, doorClient(c), "GET", c.DoorURL+"/api/v1/namespaces/"+heldNS+"/configmaps", token, nil)
		if code != http.StatusUnauthorized {
			t.Errorf("token for %s only: got %d %.200s, want 401 as from the cloud", ownAudience, code, body)
		}
	})
}

func toSARExtra(in map[string]authenticationv1.ExtraValue) map[string]authorizationv1.ExtraValue {
	out := make(map[string]authorizationv1.ExtraValue, len(in))
	for k, v := range in {
		out[k] = authorizationv1.ExtraValue(v)
	}
	return out
}

// checkOfflineTokens prepares three tokens online, stops the cloud and
// presents them.
func checkOfflineTokens(t *testing.T, c *framework.Cluster) {
	mustCreate(t, func() error {
		_, err := c.Admin.CoreV1().Nodes().Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "other-node"}},
			metav1.CreateOptions{})
		return err
	})
	fresh := createPod(t, c, systemNS, "kube-proxy", "kube-proxy-fresh", c.NodeName)
	doomed := createPod(t, c, systemNS, "kube-proxy", "kube-proxy-doomed", c.NodeName)
	elsewhere := createPod(t, c, systemNS, "kube-proxy", "kube-proxy-elsewhere", "other-node")
	tokens := map[string]string{}
	for _, p := range []*corev1.Pod{fresh, doomed, elsewhere} {
		tokens[p.Name] = podToken(t, c, systemNS, "kube-proxy", p)
	}
	waitEdgeHasPod(t, c, systemNS, fresh.Name, true)
	zero := int64(0)
	if err := c.Admin.CoreV1().Pods(systemNS).Delete(t.Context(), doomed.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("delete pod: %v", err)
	}
	waitEdgeHasPod(t, c, systemNS, doomed.Name, false)
	c.StopCloud()
	waitCloudLink(t, c, "disconnected")
	path := c.DoorURL + "/apis/discovery.k8s.io/v1/namespaces/" + heldNS + "/endpointslices"
	for _, tc := range []struct {
		pod      string
		accepted bool
	}{{fresh.Name, true}, {doomed.Name, false}, {elsewhere.Name, false}} {
		code, body := doorDo(t, doorClient(c), "GET", path, tokens[tc.pod], nil)
		if got := code != http.StatusUnauthorized; got != tc.accepted {
			t.Errorf("offline, token of %s: got %d %.200s, want accepted %v", tc.pod, code, body, tc.accepted)
		}
	}
	c.StartCloud()
}

// createPod creates a pod of service account sa on node (no kubelet runs
// it).
func createPod(t *testing.T, c *framework.Cluster, ns, sa, name, node string) *corev1.Pod {
	t.Helper()
	pod, err := c.Admin.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: sa, Containers: []corev1.Container{{Name: "app", Image: appImage}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s/%s: %v", ns, name, err)
	}
	return pod
}

func podRef(pod *corev1.Pod) *authenticationv1.BoundObjectReference {
	return &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
}

func requestToken(t *testing.T, c *framework.Cluster, ns, sa string, spec authenticationv1.TokenRequestSpec) string {
	t.Helper()
	tr, err := c.Admin.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa, &authenticationv1.TokenRequest{Spec: spec},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	return tr.Status.Token
}

// waitEdgeHasPod waits until the node's view of the daemon has (or no
// longer has) pod ns/name.
func waitEdgeHasPod(t *testing.T, c *framework.Cluster, ns, name string, present bool) {
	t.Helper()
	edge := c.EdgeClient()
	_, err := eventually(t.Context(), time.Minute, func() (string, error) {
		_, err := edge.CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
		if (err == nil) != present {
			return "", fmt.Errorf("pod %s/%s on the edge: present %v, want %v (%v)", ns, name, err == nil, present, err)
		}
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// jtiOf reads a JWT's jti, unverified (the test's own token).
func jtiOf(t *testing.T, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token is not a JWT")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		JTI string `json:"jti"`
	}
	if err != nil || json.Unmarshal(raw, &claims) != nil || claims.JTI == "" {
		t.Fatalf("token has no jti: %v", err)
	}
	return claims.JTI
}

// sarUser finds, in the audit log since since, the SubjectAccessReview the
// node sent for the identity whose credential id is credID.
func sarUser(t *testing.T, c *framework.Cluster, since time.Time, credID string) authorizationv1.SubjectAccessReviewSpec {
	t.Helper()
	for _, e := range c.CloudRequests(func(u string) bool { return u == c.EdgeUser() }, since, time.Now().Add(time.Minute)) {
		if e.Resource() != "subjectaccessreviews" || len(e.RequestObject) == 0 {
			continue
		}
		var sar authorizationv1.SubjectAccessReview
		if err := json.Unmarshal(e.RequestObject, &sar); err != nil {
			t.Fatalf("audited SubjectAccessReview: %v", err)
		}
		if ids := sar.Spec.Extra["authentication.kubernetes.io/credential-id"]; len(ids) == 1 && ids[0] == credID {
			return sar.Spec
		}
	}
	t.Fatalf("no SubjectAccessReview from the node for credential %s since %s", credID, since.Format(time.RFC3339))
	return authorizationv1.SubjectAccessReviewSpec{}
}

// cloudReview is the cloud's TokenReview of token (no audiences: the API's).
func cloudReview(t *testing.T, c *framework.Cluster, token string) authenticationv1.UserInfo {
	t.Helper()
	tr, err := c.Admin.AuthenticationV1().TokenReviews().Create(t.Context(),
		&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil || !tr.Status.Authenticated {
		t.Fatalf("cloud TokenReview: %v %+v", err, tr.Status)
	}
	return tr.Status.User
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
