//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// scrubDeadline is how long a secret no pod references any more may leave
// bytes under the data dir (issue: within 60 s).
const scrubDeadline = 60 * time.Second

// Values of the test's secrets; long and unique, so that finding their
// base64 encoding in a file means the secret is stored there.
const (
	usedSecretValue   = "node-scope-used-secret-value-7f3a9c1e5b"
	unusedSecretValue = "node-scope-unused-secret-value-2d8e4b6a0c"
)

// TestNodeScope runs apiserver-lite on the node's own client certificate
// (CN=system:node:<n>, O=system:nodes) against a cloud enforcing the Node
// authorizer and NodeRestriction, with no RBAC for it: it picks node scope,
// serves what the node may read online and offline, never stores a secret
// no pod on the node references, and scrubs a secret from disk once its
// last pod is gone.
func TestNodeScope(t *testing.T) {
	const ns = "nodescope"
	c := framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{ns}, AuditLog: true})
	ctx := t.Context()
	admin := c.Admin.CoreV1()
	mustCreate(t, func() error {
		_, err := admin.Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: c.NodeName}}, metav1.CreateOptions{})
		return err
	})
	for name, value := range map[string]string{"used": usedSecretValue, "unused": unusedSecretValue} {
		mustCreate(t, func() error {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"v": []byte(value)}}
			_, err := admin.Secrets(ns).Create(ctx, s, metav1.CreateOptions{})
			return err
		})
	}
	mustCreate(t, func() error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "used-cm"}, Data: map[string]string{"k": "v"}}
		_, err := admin.ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := admin.Pods(ns).Create(ctx, nodeScopePod(c.NodeName), metav1.CreateOptions{})
		return err
	})

	started := time.Now()
	c.StartEdge()
	edge := c.EdgeClient()
	checkNodeReads(t, c, edge, ns, "online")
	checkUnusedSecret(t, c, edge, ns)
	checkStreamedReads(t, c, started, map[string]string{"secrets": "used", "configmaps": "used-cm"})

	c.StopCloud()
	checkNodeReads(t, c, edge, ns, "cloud stopped")
	c.KillEdge()
	c.StartEdge()
	checkNodeReads(t, c, edge, ns, "restarted with the cloud stopped")
	c.StartCloud()

	w, err := edge.CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=used"})
	if err != nil {
		t.Fatalf("watch the used secret through the edge: %v", err)
	}
	defer w.Stop()
	zero := int64(0)
	if err := admin.Pods(ns).Delete(ctx, "uses-secret", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("delete pod: %v", err)
	}
	start := time.Now()
	if err := waitDeleted(ctx, w, "used"); err != nil {
		t.Errorf("local watcher of the used secret: %v", err)
	}
	encoded := []byte(base64.StdEncoding.EncodeToString([]byte(usedSecretValue)))
	_, err = eventually(ctx, scrubDeadline, func() (string, error) {
		if hits := filesContaining(t, dataDir(c), encoded); len(hits) > 0 {
			return "", fmt.Errorf("the secret's bytes are still in %v", hits)
		}
		return "", nil
	})
	if err != nil {
		t.Errorf("%d s after its last pod was deleted: %v", int(time.Since(start).Seconds()), err)
	}
	if _, err := edge.CoreV1().Secrets(ns).Get(ctx, "used", metav1.GetOptions{}); err == nil {
		t.Errorf("edge GET of the secret after its pod was deleted: got it, want an error")
	}
}

// checkStreamedReads checks that the edge read each referenced object
// (resource: name) with a streaming watch the cloud's Node authorizer let
// it open (sendInitialEvents=true and the name's field selector), and
// listed none of them, since since.
func checkStreamedReads(t *testing.T, c *framework.Cluster, since time.Time, objects map[string]string) {
	t.Helper()
	streams, lists := map[string]int{}, map[string]int{}
	for _, e := range c.CloudRequests(func(u string) bool { return u == c.EdgeUser() }, since, time.Now()) {
		u, err := url.Parse(e.RequestURI)
		if err != nil {
			t.Fatalf("audited request URI %q: %v", e.RequestURI, err)
		}
		q := u.Query()
		name, ok := strings.CutPrefix(q.Get("fieldSelector"), "metadata.name=")
		if !ok || objects[e.Resource()] != name {
			continue
		}
		switch {
		case e.Verb == "list":
			lists[e.Resource()]++
		case e.Verb == "watch" && q.Get("sendInitialEvents") == "true" && q.Get("resourceVersionMatch") == "NotOlderThan":
			streams[e.Resource()]++
		}
	}
	for resource, name := range objects {
		if streams[resource] == 0 || lists[resource] != 0 {
			t.Errorf("cloud reads of %s %s: got %d streaming watches and %d LISTs, want at least 1 streaming watch and no LIST",
				resource, name, streams[resource], lists[resource])
		}
	}
}

// nodeScopePod is bound to node and references the secret "used" (volume)
// and the configmap "used-cm" (envFrom); service-account admission adds the
// projected token volume that names kube-root-ca.crt.
func nodeScopePod(node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "uses-secret"},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "used-cm"}}}}}},
			Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "used"}}}},
		},
	}
}

// checkNodeReads reads through the edge what the node may read: its pod,
// its Node, services, and the referenced secret and configmaps.
func checkNodeReads(t *testing.T, c *framework.Cluster, edge kubernetes.Interface, ns, when string) {
	t.Helper()
	ctx := t.Context()
	core := edge.CoreV1()
	reads := map[string]func() error{
		"pod": func() error {
			// As the kubelet lists: its own pods, the scope the node may read.
			l, err := core.Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + c.NodeName})
			if err == nil && len(l.Items) != 1 {
				err = fmt.Errorf("got %d pods, want 1", len(l.Items))
			}
			return err
		},
		"node": func() error { _, err := core.Nodes().Get(ctx, c.NodeName, metav1.GetOptions{}); return err },
		"service": func() error {
			_, err := core.Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			return err
		},
		"secret": func() error {
			s, err := core.Secrets(ns).Get(ctx, "used", metav1.GetOptions{})
			if err == nil && string(s.Data["v"]) != usedSecretValue {
				err = fmt.Errorf("got data %q, want the secret's value", s.Data["v"])
			}
			return err
		},
		"configmap": func() error { _, err := core.ConfigMaps(ns).Get(ctx, "used-cm", metav1.GetOptions{}); return err },
		"root CA configmap": func() error {
			_, err := core.ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			return err
		},
	}
	for what, read := range reads {
		if _, err := eventually(ctx, edgeSyncTimeout, func() (string, error) { return "", read() }); err != nil {
			t.Errorf("%s: edge read of the %s: %v", when, what, err)
		}
	}
}

// checkUnusedSecret shows that the node may not read a secret no pod on it
// references, and that the edge neither serves nor stores it.
func checkUnusedSecret(t *testing.T, c *framework.Cluster, edge kubernetes.Interface, ns string) {
	t.Helper()
	ctx := t.Context()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.EdgeCloudKubeconfig)
	if err != nil {
		t.Fatalf("node kubeconfig: %v", err)
	}
	asNode := kubernetes.NewForConfigOrDie(cfg)
	if _, err := asNode.CoreV1().Secrets(ns).Get(ctx, "unused", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("cloud GET of the unreferenced secret as the node: got %v, want 403", err)
	}
	_, err = edge.CoreV1().Secrets(ns).Get(ctx, "unused", metav1.GetOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("edge GET of the unreferenced secret: got %v, want the cloud's 403, never the secret or a local 404", err)
	}
	encoded := []byte(base64.StdEncoding.EncodeToString([]byte(unusedSecretValue)))
	if hits := filesContaining(t, dataDir(c), encoded); len(hits) > 0 {
		t.Errorf("the unreferenced secret's bytes are in %v, want in no file", hits)
	}
	if hits := filesContaining(t, dataDir(c), []byte(unusedSecretValue)); len(hits) > 0 {
		t.Errorf("the unreferenced secret's value is in %v, want in no file", hits)
	}
}

func dataDir(c *framework.Cluster) string { return filepath.Dir(c.EdgeDBPath()) }

// filesContaining returns the files under dir whose bytes contain needle.
func filesContaining(t *testing.T, dir string, needle []byte) []string {
	t.Helper()
	var hits []string
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil // a side file SQLite just removed
		}
		if err != nil {
			return err
		}
		if bytes.Contains(b, needle) {
			hits = append(hits, filepath.Base(path))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return hits
}

// waitDeleted waits for a DELETED event of name on w.
func waitDeleted(ctx context.Context, w watch.Interface, name string) error {
	ctx, cancel := context.WithTimeout(ctx, scrubDeadline)
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("no DELETED event for %s: %w", name, ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("watch closed before a DELETED event for %s", name)
			}
			if s, ok := ev.Object.(*corev1.Secret); ok && ev.Type == watch.Deleted && s.Name == name {
				return nil
			}
		}
	}
}

func mustCreate(t *testing.T, create func() error) {
	t.Helper()
	if err := create(); err != nil {
		t.Fatalf("create: %v", err)
	}
}
