//go:build e2e

package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// suiteTimeout bounds the whole e2e.test run; the focused specs take a few
// minutes on two cores.
const suiteTimeout = 30 * time.Minute

// focus selects the api-machinery specs apiserver-lite must pass: Watchers,
// Table transformation, Discovery, server version, chunking and API
// Streaming (WatchList).
const focus = `\[sig-api-machinery\] (Watchers|Servers with support for Table transformation|Discovery|server version|` +
	`Servers with support for API chunking|API Streaming \(aka\. WatchList\)) `

// compactionInterval is kube-apiserver's etcd compaction interval here,
// shorter than its 5 minute default so the [Slow] chunking spec, which
// waits for a continue token to be compacted away, takes about a minute.
const compactionInterval = "1m"

// e2eTestEnv names the e2e.test binary; by default it is e2e.test in the
// tools dir, where build.sh --upstream-e2e puts it.
const e2eTestEnv = "APISERVER_LITE_UPSTREAM_E2E_TEST"

// TestUpstreamAPIMachinery runs the focused specs of Kubernetes' own
// e2e.test with a kubeconfig that points at apiserver-lite, and requires
// every spec to pass. Each spec's outcome is logged.
func TestUpstreamAPIMachinery(t *testing.T) {
	bin := upstreamBinary(t)
	c := framework.New(t, framework.Options{CloudArgs: []string{"--etcd-compaction-interval=" + compactionInterval}})
	useAdminCredentials(t, c)
	mustCreateNode(t, c)
	c.StartEdge()
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { provisionServiceAccounts(ctx, t, c) })
	defer wg.Wait()
	defer cancel()

	report := filepath.Join(c.Dir, "upstream-report.json")
	runCtx, stop := context.WithTimeout(t.Context(), suiteTimeout)
	defer stop()
	cmd := exec.CommandContext(runCtx, bin,
		"--kubeconfig", c.EdgeLocalKubeconfig,
		"--provider", "skeleton",
		"--ginkgo.focus", focus,
		"--ginkgo.json-report", report,
		"--ginkgo.no-color",
		"--ginkgo.timeout", suiteTimeout.String(),
		// No controller-manager and no kubelet run here: do not wait for
		// nodes, system pods or service account tokens.
		"--allowed-not-ready-nodes=-1", "--num-nodes=1",
		"--e2e-verify-service-account=false",
		"--report-dir", filepath.Join(c.Dir, "upstream"),
	)
	logPath := filepath.Join(c.Dir, "e2e.test.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("create %s: %v", logPath, err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	t.Logf("running %s (log: %s)", bin, logPath)
	runErr := cmd.Run()
	specs, err := readReport(report)
	if err != nil {
		t.Fatalf("e2e.test: %v; %v\n%s", runErr, err, tail(logPath))
	}
	requireAllPassed(t, specs)
	if runErr != nil && !t.Failed() {
		t.Errorf("e2e.test: %v\n%s", runErr, tail(logPath))
	}
}

// upstreamBinary is the e2e.test to run.
func upstreamBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(e2eTestEnv)
	if bin == "" {
		bin = filepath.Join(os.Getenv(framework.EnvToolsBin), "e2e.test")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("e2e.test: %v; build it with: make upstream-e2e (or set %s)", err, e2eTestEnv)
	}
	return bin
}

// useAdminCredentials makes apiserver-lite reach the cloud as the cluster
// admin. The upstream specs create namespaces, pods and other objects
// through it, which a node's identity may not; reads are what is tested.
func useAdminCredentials(t *testing.T, c *framework.Cluster) {
	t.Helper()
	admin, err := os.ReadFile(c.AdminKubeconfig)
	if err != nil {
		t.Fatalf("read admin kubeconfig: %v", err)
	}
	if err := os.WriteFile(c.EdgeCloudKubeconfig, admin, 0o600); err != nil {
		t.Fatalf("write edge kubeconfig: %v", err)
	}
}

// mustCreateNode registers the edge's Node, Ready, as its kubelet would:
// the Table spec for nodes needs one.
func mustCreateNode(t *testing.T, c *framework.Cluster) {
	t.Helper()
	now := metav1.Now()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: c.NodeName},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}},
	}
	if _, err := c.Admin.CoreV1().Nodes().Create(t.Context(), node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node: %v", err)
	}
}

// specResult is one spec of the run.
type specResult struct {
	name, state, failure string
}

// readReport reads the focused specs of a ginkgo JSON report (it lists the
// specs the focus left out as skipped too).
func readReport(path string) ([]specResult, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	var reports []struct {
		SpecReports []struct {
			ContainerHierarchyTexts []string
			LeafNodeText            string
			LeafNodeType            string
			State                   string
			Failure                 struct{ Message string }
		}
	}
	if err := json.Unmarshal(raw, &reports); err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	focused := regexp.MustCompile(focus)
	var out []specResult
	for _, r := range reports {
		for _, s := range r.SpecReports {
			name := strings.Join(append(s.ContainerHierarchyTexts, s.LeafNodeText), " ")
			if s.LeafNodeType != "It" || !focused.MatchString(name) {
				continue
			}
			out = append(out, specResult{name: name, state: s.State, failure: s.Failure.Message})
		}
	}
	return out, nil
}

// requireAllPassed logs each spec's outcome and fails for each that did
// not pass, or when no spec ran at all.
func requireAllPassed(t *testing.T, specs []specResult) {
	t.Helper()
	if len(specs) == 0 {
		t.Fatalf("no spec matched the focus %q", focus)
	}
	passed := 0
	for _, s := range specs {
		if s.state == "passed" {
			passed++
			t.Logf("PASS %s", s.name)
			continue
		}
		t.Errorf("%s %s: %s", strings.ToUpper(s.state), s.name, s.failure)
	}
	t.Logf("%d of %d upstream specs passed", passed, len(specs))
}

// tailBytes is how much of e2e.test's log a failure shows.
const tailBytes = 8 << 10

func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
	}
	return string(b)
}
