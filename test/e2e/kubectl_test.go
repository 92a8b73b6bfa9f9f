//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// kubectlWatchTimeout bounds the background kubectl get -w run.
const kubectlWatchTimeout = 2 * time.Minute

// testKubectlThroughEdge runs the built kubectl against the edge on the
// objects seedCloud created.
func testKubectlThroughEdge(t *testing.T, c *framework.Cluster) {
	t.Run("get pods -A", func(t *testing.T) {
		out, err := c.KubectlEdge("get", "pods", "-A")
		if err != nil {
			t.Fatalf("%v", err)
		}
		if !tableHasRow(out, fidelityNS, boundPod) {
			t.Errorf("no row %s/%s (bound to %s) in:\n%s", fidelityNS, boundPod, c.NodeName, out)
		}
		// All pods is wider than the synced scope (this node's pods), so
		// while the cloud is reachable it answers, other nodes' pods included.
		if !tableHasRow(out, fidelityNS, elsewherePod) {
			t.Errorf("no row %s/%s (bound to %s) in the cloud's answer:\n%s", fidelityNS, elsewherePod, otherNode, out)
		}
	})
	t.Run("get cm -A -o json", func(t *testing.T) {
		var diff string
		_, err := eventually(t.Context(), edgeSyncTimeout, func() (string, error) {
			diff = compareKubectlConfigMaps(t.Context(), c)
			if diff != "" {
				return "", fmt.Errorf("kubectl get cm -A -o json through the edge differs from the cloud")
			}
			return "", nil
		})
		if err != nil {
			t.Fatalf("%v: %s", err, diff)
		}
	})
	t.Run("get cm -w", func(t *testing.T) { testKubectlWatch(t, c) })
}

// compareKubectlConfigMaps returns how kubectl's JSON list of configmaps
// through the edge differs from a cloud LIST, or "" if it does not.
func compareKubectlConfigMaps(ctx context.Context, c *framework.Cluster) string {
	out, err := c.KubectlEdge("get", "cm", "-A", "-o", "json")
	if err != nil {
		return err.Error()
	}
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Kind     string            `json:"kind"`
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return fmt.Sprintf("decode kubectl output: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, item := range list.Items {
		if item.Kind != "ConfigMap" {
			return fmt.Sprintf("item %s/%s has kind %q, want ConfigMap", item.Metadata.Namespace, item.Metadata.Name, item.Kind)
		}
		got[item.Metadata.Namespace+"/"+item.Metadata.Name] = item.Metadata.ResourceVersion
	}
	cloud, err := c.Admin.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Sprintf("cloud list: %v", err)
	}
	want := map[string]string{}
	for _, cm := range cloud.Items {
		want[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	if _, ok := got[fidelityNS+"/"+watchedCM]; !ok || !maps.Equal(got, want) {
		return fmt.Sprintf("kubectl (%s) has %v, cloud LIST has %v", list.Kind, got, want)
	}
	return ""
}

// testKubectlWatch runs kubectl get cm -w through the edge, waits for its
// initial rows, updates a configmap in the cloud and waits for kubectl to
// print the updated configmap again.
func testKubectlWatch(t *testing.T, c *framework.Cluster) {
	ctx, cancel := context.WithTimeout(t.Context(), kubectlWatchTimeout)
	defer cancel()
	kw, err := c.StartKubectlEdge(ctx, "get", "cm", "-n", fidelityNS, "-w")
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer kw.Stop()
	waitRows := func(what string, n int) {
		t.Helper()
		if _, err := eventually(ctx, edgeSyncTimeout, func() (string, error) {
			select {
			case <-kw.Exited():
				return "", fmt.Errorf("kubectl get -w exited early")
			default:
			}
			if got := rowsNamed(kw.Output(), watchedCM); got < n {
				return "", fmt.Errorf("%d rows for %s, want %d", got, watchedCM, n)
			}
			return "", nil
		}); err != nil {
			t.Fatalf("%s: %v; kubectl output:\n%s", what, err, kw.Output())
		}
	}
	waitRows("initial list", 1)
	before := kw.Output()
	cms := c.Admin.CoreV1().ConfigMaps(fidelityNS)
	cm, err := cms.Get(ctx, watchedCM, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s from the cloud: %v", watchedCM, err)
	}
	cm.Data["watched"] = "changed"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update %s in the cloud: %v", watchedCM, err)
	}
	waitRows("after the cloud update", rowsNamed(before, watchedCM)+1)
	t.Logf("kubectl get cm -w through the edge:\n%s", kw.Output())
}

// rowsNamed counts the output lines whose first column is name.
func rowsNamed(out, name string) int {
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			n++
		}
	}
	return n
}
