//go:build e2e

package e2e

import (
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// jwtPrefix starts every service-account token: base64url of `{"alg":`.
const jwtPrefix = "eyJhbGciOi"

// secretPod is a pod on the node that mounts secret and, as every pod,
// its projected service-account token.
func secretPod(c *framework.Cluster, name, secret string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName:   c.NodeName,
			Containers: []corev1.Container{{Name: "app", Image: appImage, VolumeMounts: []corev1.VolumeMount{{Name: "secret", MountPath: "/etc/secret"}}}},
			Volumes:    []corev1.Volume{{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}},
		},
	}
}

// checkNoCredentials fails the test if any file under dir holds the
// secret's value (raw or as stored, base64) or a token.
func checkNoCredentials(t *testing.T, where, dir, secretValue string) {
	t.Helper()
	for what, needle := range map[string]string{
		"secret value":        secretValue,
		"secret value base64": base64.StdEncoding.EncodeToString([]byte(secretValue)),
		"token":               jwtPrefix,
	} {
		if hits := filesContaining(t, dir, []byte(needle)); len(hits) > 0 {
			t.Errorf("%s: the %s is in %v, want in no file", where, what, hits)
		}
	}
}

// randomValue is a value no other test stores.
func randomValue(t *testing.T) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "at-rest-" + hex.EncodeToString(b)
}

// TestAtRestStolenDiskHoldsNothing runs a kubelet in node scope on an edge
// with a state key. After its pod mounted a secret and its projected
// token, neither the data dir nor a snapshot holds the secret's value or
// any token, a snapshot has no credential rows, and an offline reboot
// still starts the pod with its token, replayed from the encrypted store.
func TestAtRestStolenDiskHoldsNothing(t *testing.T) {
	const ns = "at-rest"
	c := framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{ns}})
	ctx := t.Context()
	value := randomValue(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-secret"}, Data: map[string][]byte{"k": []byte(value)}}
	if _, err := c.Admin.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create secret: %v", err)
	}
	c.StartEdge()
	c.StartKubemark()
	c.WaitNodeReady()
	pod := secretPod(c, "secret-app", secret.Name)
	if _, err := c.Admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	running := waitPodRunning(t, c, ns, pod.Name)
	if t.Failed() {
		return
	}
	checkNoCredentials(t, "data dir", c.EdgeDataDir(), value)
	snap := filepath.Join(t.TempDir(), "node.snap")
	if out, err := exec.CommandContext(ctx, c.Bins.APIServerLite, "snapshot", "save", "--data-dir", c.EdgeDataDir(), snap).CombinedOutput(); err != nil {
		t.Fatalf("snapshot save: %v\n%s", err, out)
	}
	checkNoCredentials(t, "snapshot", filepath.Dir(snap), value)
	checkNoCredentialRows(t, snap)

	rebootOffline(t, c)
	checkNotKilled(t, c, running)
	checkNoCredentials(t, "data dir after the offline reboot", c.EdgeDataDir(), value)
}

// checkNoCredentialRows opens a snapshot with SQLite and fails the test
// if it holds any stored credential or get-only answer.
func checkNoCredentialRows(t *testing.T, snap string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+snap+"?mode=ro")
	if err != nil {
		t.Fatalf("open snapshot: %v", err)
	}
	defer db.Close()
	var n int
	err = db.QueryRow(`SELECT count(*) FROM meta WHERE key LIKE 'tokenrequest/%' OR key LIKE 'auth/token/%'
		OR key LIKE 'auth/decision/%' OR key LIKE 'getonly/%'`).Scan(&n)
	if err != nil || n != 0 {
		t.Errorf("snapshot: got %d credential rows (%v), want 0", n, err)
	}
}

// TestAtRestWithoutKey: an edge without a state key serves, names the
// missing key in /readyz?verbose, and keeps the kubelet's tokens in
// memory only.
func TestAtRestWithoutKey(t *testing.T) {
	const ns = "at-rest-nokey"
	c := framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{ns}, NoEncryptionKey: true})
	ctx := t.Context()
	c.StartEdge()
	if body := edgeGetText(t, c.EdgeURL+"/readyz?verbose"); !strings.Contains(body, "encryption-key: no encryption-key-file") {
		t.Errorf("/readyz?verbose without a key: no encryption-key line in:\n%s", body)
	}
	c.StartKubemark()
	c.WaitNodeReady()
	value := randomValue(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-secret"}, Data: map[string][]byte{"k": []byte(value)}}
	if _, err := c.Admin.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create secret: %v", err)
	}
	pod := secretPod(c, "token-app", secret.Name)
	if _, err := c.Admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	waitPodRunning(t, c, ns, pod.Name)
	if !strings.Contains(c.KubemarkLog(), `MountVolume.SetUp succeeded for volume \"kube-api-access-`) {
		t.Fatalf("the kubelet mounted no projected token; the test cannot see where it went\n%s", tail(c.KubemarkLog(), 40))
	}
	if hits := filesContaining(t, c.EdgeDataDir(), []byte(jwtPrefix)); len(hits) > 0 {
		t.Errorf("a token is in %v without a state key, want in no file", hits)
	}
}

// TestTokenStoredRightAfterCloudReturns: a TokenRequest answered by the
// cloud right after the link returns, before the prober may notice, is
// stored, so after a restart with the cloud gone the same request gets
// the same token.
func TestTokenStoredRightAfterCloudReturns(t *testing.T) {
	const ns = "at-rest-outcome"
	c := framework.New(t, framework.Options{EdgeLink: true, Namespaces: []string{ns}})
	ctx := t.Context()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "held"},
		Spec: corev1.PodSpec{NodeName: c.NodeName, Containers: []corev1.Container{{Name: "app", Image: appImage}}}}
	created, err := c.Admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod: %v", err)
	}
	c.StartEdge()
	edge := c.EdgeClient()
	if _, err := eventually(ctx, edgeSyncTimeout, func() (string, error) {
		_, err := edge.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		return "", err
	}); err != nil {
		t.Fatalf("edge never held the pod: %v", err)
	}
	c.CutLink()
	waitCloudLink(t, c, "disconnected")
	c.RestoreLink()
	exp := int64(3600)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp,
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: created.Name, UID: created.UID}}}
	first, err := edge.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", req, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request right after the link returned: %v", err)
	}
	t.Logf("link state when the token was answered: %s", cloudLinkLine(edgeGetText(t, c.EdgeURL+"/readyz?verbose")))
	c.StopCloud()
	c.KillEdge()
	c.StartEdge()
	again, err := c.EdgeClient().CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", req, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("same request after a restart with the cloud gone: got %v, want the stored answer", err)
	}
	if again.Status.Token != first.Status.Token {
		t.Errorf("after the restart: got another token, want the one the cloud gave")
	}
}

// cloudLinkLine is the cloud-link line of a /readyz?verbose body.
func cloudLinkLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "cloud-link") {
			return l
		}
	}
	return "(none)"
}
