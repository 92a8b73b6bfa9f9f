//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// startWindow is how long after a start its connections are counted:
	// the first sync, the scope check and the read of the signing keys
	// are done within it.
	startWindow = 30 * time.Second
	// startCPUWindow is how long after a start the daemon's own CPU is
	// read from /proc.
	startCPUWindow = 10 * time.Second
	// startConnsWant is a start's TLS connections to the cloud: one on the
	// node's credentials, shared by every client of them, and one for the
	// read of the signing keys, which the cloud must see as the minted
	// token's identity and so cannot go on the node's connection (the
	// cloud authenticates its client certificate first).
	startConnsWant = 2
	// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's
	// utime and stime.
	clockTicks = 100
)

// TestStartCostsTheCloudTwoConnections: a start, fresh or on existing
// state, costs the cloud one TLS connection per credential: the node's
// (scope review, probe, every sync) and the minted token's (the signing
// keys), not one per client or per concurrent first request.
func TestStartCostsTheCloudTwoConnections(t *testing.T) {
	const ns = "start-conns"
	c := framework.New(t, framework.Options{NodeCredentials: true, EdgeLink: true, AuditLog: true, Namespaces: []string{ns}})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: corev1.PodSpec{NodeName: c.NodeName, Containers: []corev1.Container{{Name: "app", Image: appImage}}}}
	if _, err := c.Admin.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	for _, phase := range []string{"fresh start", "restart on existing state"} {
		if phase != "fresh start" {
			if err := c.EdgeProcess().Stop(); err != nil {
				t.Fatalf("stop apiserver-lite: %v", err)
			}
		}
		start := time.Now()
		c.StartEdge()
		cpu := startCPU(t, c, start)
		time.Sleep(time.Until(start.Add(startWindow)))
		accepts := c.LinkAccepts(start)
		t.Logf("%s: %d connections in %v at %v; apiserver-lite CPU in its first %v: %v",
			phase, len(accepts), startWindow, sinceEach(start, accepts), startCPUWindow, cpu)
		for _, e := range c.CloudRequests(func(string) bool { return true }, start, start.Add(startWindow)) {
			if e.User.Username != "system:apiserver" && !strings.HasPrefix(e.User.Username, "system:admin") {
				t.Logf("  %v %s %s %s", e.RequestReceived.Sub(start).Round(time.Millisecond), e.User.Username, e.Verb, e.RequestURI)
			}
		}
		if len(accepts) > startConnsWant {
			t.Errorf("%s: got %d TLS connections to the cloud, want at most %d", phase, len(accepts), startConnsWant)
		}
	}
}

// sinceEach is each of at as the time since start.
func sinceEach(start time.Time, at []time.Time) []time.Duration {
	out := make([]time.Duration, len(at))
	for i, a := range at {
		out[i] = a.Sub(start).Round(time.Millisecond)
	}
	return out
}

// startCPU returns apiserver-lite's user+system CPU time from its
// start, at start, until startCPUWindow after it, read from /proc.
func startCPU(t *testing.T, c *framework.Cluster, start time.Time) time.Duration {
	t.Helper()
	pid := c.EdgeProcess().Pid()
	time.Sleep(time.Until(start.Add(startCPUWindow)))
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("read apiserver-lite's stat: %v", err)
	}
	// Fields after the command's closing parenthesis: utime and stime are
	// the 14th and 15th of the line, the 12th and 13th after it.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	utime, uerr := strconv.Atoi(f[11])
	stime, serr := strconv.Atoi(f[12])
	if uerr != nil || serr != nil {
		t.Fatalf("apiserver-lite's stat: utime %q stime %q", f[11], f[12])
	}
	return time.Duration(utime+stime) * time.Second / clockTicks
}
