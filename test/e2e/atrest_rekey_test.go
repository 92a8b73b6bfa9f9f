//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// rekeyWatchTimeout bounds how long the resumed watch may take to deliver
// every change the writer made.
const rekeyWatchTimeout = time.Minute

// TestRekeyWatchSeesNoGap rotates the state key while the cloud keeps
// changing a secret: the edge is stopped, `rekey` re-encrypts its state,
// and the restarted edge serves a watch from before the rotation with
// every change in order. The old key no longer opens the state.
func TestRekeyWatchSeesNoGap(t *testing.T) {
	const ns = "at-rest-rekey"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}})
	ctx := t.Context()
	admin := durFastAdmin(t, c)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rotating"}, StringData: map[string]string{"v": "0"}}
	if _, err := admin.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create secret: %v", err)
	}
	c.StartEdge()
	edge := c.EdgeClient()
	var startRV string
	if _, err := eventually(ctx, edgeSyncTimeout, func() (string, error) {
		l, err := edge.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != 1 {
			return "", fmt.Errorf("edge lists %v secrets: %v", l, err)
		}
		startRV = l.ResourceVersion
		return "", nil
	}); err != nil {
		t.Fatal(err)
	}

	// The load: the secret changes every few milliseconds until stopped.
	wctx, stopWriter := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var last int
	wg.Go(func() { last = rewriteSecret(wctx, t, c, ns, secret.Name) })
	time.Sleep(time.Second)

	if err := c.EdgeProcess().Stop(); err != nil {
		t.Fatalf("stop edge: %v", err)
	}
	oldKey := filepath.Join(t.TempDir(), "old.key")
	newKey := filepath.Join(t.TempDir(), "new.key")
	edgeCLI(t, c, "keygen", newKey, "--data-dir", c.EdgeDataDir())
	if err := os.Rename(c.EncryptionKeyFile, oldKey); err != nil {
		t.Fatal(err)
	}
	edgeCLI(t, c, "rekey", newKey, "--encryption-key-file", oldKey, "--data-dir", c.EdgeDataDir())
	if err := os.Rename(newKey, c.EncryptionKeyFile); err != nil {
		t.Fatal(err)
	}
	c.StartEdge()
	time.Sleep(time.Second)
	stopWriter()
	wg.Wait()

	checkWatchGapless(t, c, ns, startRV, last)
	checkOldKeyRefused(t, c, oldKey)
}

// rewriteSecret sets the secret's value to 1, 2, ... until ctx ends, and
// returns the last value written.
func rewriteSecret(ctx context.Context, t *testing.T, c *framework.Cluster, ns, name string) int {
	admin := durFastAdmin(t, c)
	i := 0
	for ctx.Err() == nil {
		patch := fmt.Sprintf(`{"stringData":{"v":%q}}`, strconv.Itoa(i+1))
		if _, err := admin.CoreV1().Secrets(ns).Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
			if ctx.Err() == nil {
				t.Errorf("patch secret: %v", err)
			}
			return i
		}
		i++
		time.Sleep(20 * time.Millisecond)
	}
	return i
}

// checkWatchGapless watches the secrets of ns through the edge from rv and
// wants every value from 1 to last, in order.
func checkWatchGapless(t *testing.T, c *framework.Cluster, ns, rv string, last int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), rekeyWatchTimeout)
	defer cancel()
	w, err := c.EdgeClient().CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatalf("watch from %s after the rekey: %v", rv, err)
	}
	defer w.Stop()
	want := 1
	for want <= last {
		select {
		case <-ctx.Done():
			t.Fatalf("watch from %s: got values up to %d, want up to %d", rv, want-1, last)
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed at value %d, want up to %d", want-1, last)
			}
			s, isSecret := ev.Object.(*corev1.Secret)
			if ev.Type != watch.Modified || !isSecret {
				t.Fatalf("got %s %T, want MODIFIED secrets: %v", ev.Type, ev.Object, ev.Object)
			}
			if got := string(s.Data["v"]); got != strconv.Itoa(want) {
				t.Fatalf("got value %s, want %d: a gap in the watch", got, want)
			}
			want++
		}
	}
}

// checkOldKeyRefused starts a second daemon on the data dir with the old
// key: it must stop at once, naming the key file.
func checkOldKeyRefused(t *testing.T, c *framework.Cluster, oldKey string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, c.Bins.APIServerLite, "--kubeconfig", c.EdgeCloudKubeconfig,
		"--data-dir", c.EdgeDataDir(), "--node-name", c.NodeName, "--listen-address", "127.0.0.1:0",
		"--encryption-key-file", oldKey).CombinedOutput()
	if err == nil || !strings.Contains(string(out), oldKey) || !strings.Contains(string(out), "does not open") {
		t.Errorf("daemon with the old key: got %v\n%s\nwant it refused, naming %s", err, out, oldKey)
	}
}
