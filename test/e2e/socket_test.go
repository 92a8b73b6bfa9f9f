//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// leaseRenewEvery is how often the test renews the node's Lease: ten
	// times the kubelet's rate, so even a short closed door is seen.
	leaseRenewEvery = time.Second
	// leaseRenewDeadline bounds one renewal, the kubelet's renew interval
	// (its lease controller gives up a renewal after it).
	leaseRenewDeadline = 10 * time.Second
	// leaseDurationSeconds is the kubelet's default nodeLeaseDurationSeconds.
	leaseDurationSeconds = 40
	// acceptAfterTerm bounds how soon after SIGTERM the new daemon serves
	// on the held socket.
	acceptAfterTerm = 5 * time.Second
	// serveFromStoreWithin bounds how soon a started daemon serves what
	// its store holds, the cloud stopped.
	serveFromStoreWithin = time.Second
	// renewalsAround is how many renewals must succeed before the restart
	// and after the new daemon serves.
	renewalsAround = 3
)

// TestRestartOnHeldSocket restarts apiserver-lite with SIGTERM on door
// sockets the harness holds, as systemd's apiserver-lite.socket does, while
// the node's Lease is renewed through its door every second with the
// node's credentials (Node,RBAC + NodeRestriction): no renewal fails, and
// the new daemon serves within acceptAfterTerm of the SIGTERM.
func TestRestartOnHeldSocket(t *testing.T) {
	c := framework.New(t, framework.Options{NodeCredentials: true, HeldSockets: true})
	c.StartEdge()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cs, err := kubernetes.NewForConfig(c.KubeletConfig())
	if err != nil {
		t.Fatal(err)
	}
	r := &renewals{}
	go r.run(ctx, cs, c.NodeName)
	r.waitFor(ctx, t, renewalsAround)

	sent := c.TermEdge()
	stopped := time.Now()
	if err := c.EdgeProcess().Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if err := cs.Discovery().RESTClient().Get().AbsPath("/livez").Do(ctx).Error(); err != nil {
		t.Errorf("the new daemon's /livez through the held door: %v", err)
	} else {
		served := time.Now()
		t.Logf("SIGTERM to exit %s, start to first answer %s, SIGTERM to first answer %s",
			stopped.Sub(sent).Round(time.Millisecond), served.Sub(started).Round(time.Millisecond), served.Sub(sent).Round(time.Millisecond))
		if got := served.Sub(sent); got > acceptAfterTerm {
			t.Errorf("the new daemon answered %s after the SIGTERM, want within %s", got.Round(time.Millisecond), acceptAfterTerm)
		}
	}
	r.waitFor(ctx, t, r.ok()+renewalsAround)
	cancel()
	if failed := r.failures(); len(failed) > 0 {
		t.Errorf("Lease renewals across the restart: got %d failed, want none:\n%v", len(failed), failed)
	}
	checkServesOfflineAtOnce(t, c, cs)
}

// checkServesOfflineAtOnce restarts the daemon with the cloud stopped: the
// node's pods are listed from its store within serveFromStoreWithin of the
// start, so nothing before the doors accept waits for the cloud.
func checkServesOfflineAtOnce(t *testing.T, c *framework.Cluster, cs kubernetes.Interface) {
	t.Helper()
	c.StopCloud()
	c.TermEdge()
	if err := c.EdgeProcess().Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	_, err := cs.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + c.NodeName})
	if err != nil {
		t.Fatalf("list the node's pods with the cloud stopped: %v", err)
	}
	took := time.Since(started)
	t.Logf("cloud stopped: start to the node's pods listed from the store %s", took.Round(time.Millisecond))
	if took > serveFromStoreWithin {
		t.Errorf("the node's pods were listed %s after the start, want within %s", took.Round(time.Millisecond), serveFromStoreWithin)
	}
}

// renewals renews a node's Lease every leaseRenewEvery, as the kubelet's
// lease controller does (Get, Create if missing, then Update the last
// answer), and records each outcome.
type renewals struct {
	mu sync.Mutex
	// succeeded counts renewals that succeeded; failed says when and how
	// the others failed. Guarded by mu.
	succeeded int
	failed    []string
}

func (r *renewals) run(ctx context.Context, cs kubernetes.Interface, node string) {
	leases := cs.CoordinationV1().Leases(nodeLeaseNamespace)
	var lease *coordinationv1.Lease
	tick := time.NewTicker(leaseRenewEvery)
	defer tick.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, leaseRenewDeadline)
		var err error
		if lease == nil {
			lease, err = leases.Get(rctx, node, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				lease, err = leases.Create(rctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node},
					Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node), LeaseDurationSeconds: ptr.To(int32(leaseDurationSeconds))}},
					metav1.CreateOptions{})
			}
		} else {
			lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			lease, err = leases.Update(rctx, lease, metav1.UpdateOptions{})
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		r.record(err)
		if err != nil {
			lease = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (r *renewals) record(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.failed = append(r.failed, fmt.Sprintf("%s: %v", time.Now().Format("15:04:05.000"), err))
		return
	}
	r.succeeded++
}

func (r *renewals) ok() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.succeeded
}

func (r *renewals) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.failed...)
}

// waitFor waits until n renewals have succeeded.
func (r *renewals) waitFor(ctx context.Context, t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Duration(n+renewalsAround)*leaseRenewEvery + leaseRenewDeadline)
	for r.ok() < n {
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("Lease renewals: %d succeeded, want %d; failed: %v", r.ok(), n, r.failures())
		}
		time.Sleep(leaseRenewEvery / 10)
	}
}

// mismatchExitWithin bounds how soon a daemon whose flags and passed
// sockets disagree exits: it checks them before anything else.
const mismatchExitWithin = 20 * time.Second

// TestHeldSocketMismatch starts apiserver-lite on held sockets that
// disagree with its door flags: it refuses to start, saying which door
// and which socket.
func TestHeldSocketMismatch(t *testing.T) {
	bins, err := framework.LocateBinaries()
	if err != nil {
		t.Fatal(err)
	}
	door, other, insecure := mustFreePort(t), mustFreePort(t), mustFreePort(t)
	at := func(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }
	for _, tt := range []struct {
		name  string
		flags []string
		held  map[string]string // socket name to address, passed in this order
		order []string
		want  string
	}{
		{"other port", []string{"--listen-address", at(door)}, map[string]string{"listen-address": at(other)}, []string{"listen-address"},
			fmt.Sprintf(`door listen-address is %s but the socket "listen-address" passed by systemd is bound to %s`, at(door), at(other))},
		{"door without its socket", []string{"--listen-address", at(door), "--insecure-listen-address", at(insecure)},
			map[string]string{"listen-address": at(door)}, []string{"listen-address"},
			fmt.Sprintf(`door insecure-listen-address is %s but systemd passed no socket named "insecure-listen-address"`, at(insecure))},
		{"socket of a door that is off", []string{"--listen-address", at(door)},
			map[string]string{"listen-address": at(door), "insecure-listen-address": at(insecure)}, []string{"listen-address", "insecure-listen-address"},
			fmt.Sprintf(`socket named "insecure-listen-address" (%s) but door insecure-listen-address is off`, at(insecure))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			held := &framework.HeldSockets{}
			defer held.Close()
			for _, name := range tt.order {
				if err := held.Hold(name, tt.held[name]); err != nil {
					t.Fatal(err)
				}
			}
			p := &framework.Process{Name: "apiserver-lite", Path: bins.APIServerLite, LogPath: filepath.Join(dir, "apiserver-lite.log"), Held: held,
				Args: append([]string{"--kubeconfig", writeUnreachableKubeconfig(t, dir), "--data-dir", filepath.Join(dir, "data"),
					"--node-name", "edge-1", "--sync-scope", "node"}, tt.flags...)}
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			defer p.Kill()
			select {
			case <-p.Exited():
			case <-time.After(mismatchExitWithin):
				t.Fatalf("apiserver-lite still runs %s after its start, want it to refuse to start:\n%s", mismatchExitWithin, p.Tail(20))
			}
			if p.ExitErr() == nil {
				t.Errorf("exit: got success, want a failure")
			}
			if log := p.Tail(20); !strings.Contains(log, tt.want) {
				t.Errorf("log: got\n%s\nwant it to say %q", log, tt.want)
			}
		})
	}
}

// mustFreePort is a loopback port free now.
func mustFreePort(t *testing.T) int {
	t.Helper()
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// writeUnreachableKubeconfig writes a cloud kubeconfig for a cloud that
// is never reached.
func writeUnreachableKubeconfig(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "cloud.kubeconfig")
	const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: cloud, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: edge, user: {token: unused}}]
contexts: [{name: cloud, context: {cluster: cloud, user: edge}}]
current-context: cloud
`
	if err := os.WriteFile(p, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
