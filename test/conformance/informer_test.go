//go:build e2e

package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// Environment of the informer child process.
const (
	envInformerChild      = "CONFORMANCE_INFORMER_CHILD" // set: run as the child
	envInformerServer     = "CONFORMANCE_INFORMER_SERVER"
	envInformerKubeconfig = "CONFORMANCE_INFORMER_KUBECONFIG" // empty: no credentials
	envInformerNamespace  = "CONFORMANCE_INFORMER_NAMESPACE"
	// envDetector is client-go's switch for its WatchList consistency check,
	// which panics when a WatchList sync differs from a list.
	envDetector = "KUBE_WATCHLIST_INCONSISTENCY_DETECTOR"
)

// Lines client-go's consistency detector logs when it runs and when it fires.
const (
	detectorRanLine   = "data consistency check for"
	detectorFiredLine = "data inconsistency detected"
)

// informerTimeouts bound the child's sync and the whole child run.
const (
	childSyncTimeout = 30 * time.Second
	childRunTimeout  = 45 * time.Second
	// childSettle lets the reflector finish its consistency check, which
	// it runs right after the sync it checks.
	childSettle = 2 * time.Second
)

// informerResult is one child's synced state.
type informerResult struct {
	keys        map[string]string // namespace/name -> resourceVersion
	detectorRan bool
	stderr      string
}

// runInformer syncs a configmap informer against both sides in child
// processes and compares keys, RVs and the consistency detector.
func (s *suite) runInformer(t *testing.T, r row) {
	s.catchUp(t, r.resource)
	cloud, edge := both(func(sd side) informerResult {
		kubeconfig := ""
		if sd.name == "cloud" {
			kubeconfig = s.c.AdminKubeconfig
		}
		return runChild(t, sd.base, kubeconfig, r.watchList)
	}, s.cloud, s.edge)
	if r.watchList && !cloud.detectorRan {
		t.Errorf("cloud: client-go's consistency detector did not run with WatchListClient on; stderr:\n%s", cloud.stderr)
	}
	d := diffs{}
	if !maps.Equal(cloud.keys, edge.keys) {
		d.add(aspectSync, "cloud %v, edge %v", cloud.keys, edge.keys)
	}
	if cloud.detectorRan != edge.detectorRan {
		d.add(aspectConsistency, "detector ran: cloud %v, edge %v", cloud.detectorRan, edge.detectorRan)
	}
	verdict(t, r, d)
}

// runChild runs this test binary as an informer child and parses its output.
// It fails the test when the child fails or the detector fired.
func runChild(t *testing.T, server, kubeconfig string, watchList bool) informerResult {
	ctx, cancel := context.WithTimeout(t.Context(), childRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		envInformerChild+"=1",
		envInformerServer+"="+server,
		envInformerKubeconfig+"="+kubeconfig,
		envInformerNamespace+"="+fixtureNamespace,
		envDetector+"=true",
		"KUBE_FEATURE_WatchListClient="+strconv.FormatBool(watchList),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := informerResult{stderr: stderr.String()}
	res.detectorRan = strings.Contains(res.stderr, detectorRanLine)
	if strings.Contains(res.stderr, detectorFiredLine) {
		t.Errorf("%s: client-go's consistency detector fired:\n%s", server, res.stderr)
	}
	if err != nil {
		t.Errorf("%s: informer child: %v\n%s", server, err, res.stderr)
		return res
	}
	if err := json.Unmarshal(stdout.Bytes(), &res.keys); err != nil {
		t.Errorf("%s: informer child output %q: %v", server, stdout.String(), err)
	}
	if len(res.keys) == 0 {
		t.Errorf("%s: informer synced no objects", server)
	}
	return res
}

// informerChild syncs a configmap informer and prints its keys and RVs as
// JSON. It returns the process exit code.
func informerChild() int {
	cfg := &rest.Config{Host: os.Getenv(envInformerServer)}
	if path := os.Getenv(envInformerKubeconfig); path != "" {
		var err error
		if cfg, err = clientcmd.BuildConfigFromFlags("", path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), childSyncTimeout)
	defer cancel()
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(os.Getenv(envInformerNamespace)))
	inf := f.Core().V1().ConfigMaps().Informer()
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		fmt.Fprintln(os.Stderr, "informer did not sync")
		return 1
	}
	time.Sleep(childSettle)
	keys := map[string]string{}
	for _, o := range inf.GetStore().List() {
		cm := o.(*corev1.ConfigMap)
		keys[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	cancel()
	f.Shutdown()
	out, _ := json.Marshal(keys)
	fmt.Println(string(out))
	return 0
}
