//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// diskRequests is how many GETs of a PVC, each with its own Accept
	// header, and how many allowed non-resource requests the tenant sends.
	diskRequests = 1000
	// diskAnnotationBytes is the size of the PVC's annotation: stored once
	// per Accept header, 1,000 copies would take tens of MB.
	diskAnnotationBytes = 32 << 10
	// diskGrowthBound is how much the data dir may grow meanwhile (the
	// WAL of the node's own sync included).
	diskGrowthBound = 8 << 20
	// diskWorkers send the tenant's requests in parallel.
	diskWorkers = 8
)

// TestDisk runs apiserver-lite in node scope with the pods' door open: a
// tenant's 1,000 GETs of a PVC (a kind the node may get but not list) with
// distinct Accept headers and 1,000 allowed non-resource requests leave no
// get-only answer and no decision row in the store, as `inspect` shows,
// and the data dir does not grow by more than a small bound.
func TestDisk(t *testing.T) {
	const ns = "disk"
	secure := freeLoopbackAddress(t)
	c := framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{ns},
		EdgeArgs: []string{"--secure-listen-address", secure}})
	ctx := t.Context()
	pod := createTenant(t, c, ns)
	createTenantPVC(t, c, ns)
	tr, err := c.Admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "reader", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{
			Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	t.Setenv("APISERVER_LITE_CLIENT_CA_FILE", filepath.Join(c.Dir, "pki", "ca.crt"))
	c.StartEdge()
	door := newTenantDoor(t, secure, filepath.Join(c.EdgeDataDir(), "tls", "ca.crt"), tr.Status.Token)
	pvc := "/api/v1/namespaces/" + ns + "/persistentvolumeclaims/data"
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, tenantReadTimeout, true, func(context.Context) (bool, error) {
		return door.get(pvc, "application/json") == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("tenant reads the PVC through the pods' door: got %d, want 200", door.get(pvc, "application/json"))
	}
	before := dirBytes(t, c.EdgeDataDir())

	codes := door.getMany(diskRequests, func(i int) (string, string) {
		return pvc, fmt.Sprintf("application/json;x-disk-test=%d", i)
	})
	if codes[http.StatusOK] != diskRequests {
		t.Errorf("GETs of the PVC with distinct Accept headers: got codes %v, want %d×200", codes, diskRequests)
	}
	codes = door.getMany(diskRequests, func(i int) (string, string) {
		return fmt.Sprintf("/apis/disk%d.example.com", i), "application/json"
	})
	if n := codes[http.StatusUnauthorized] + codes[http.StatusForbidden] + codes[0]; n != 0 {
		t.Errorf("non-resource requests: got codes %v, want all authorized (system:discovery allows /apis/*)", codes)
	}

	stored := inspectStored(t, c.EdgeDataDir())
	for _, kind := range []string{"get-only-answers", "decisions"} {
		n, ok := stored[kind]
		if !ok {
			t.Errorf("inspect: no %q line in %v", kind, stored)
		} else if n != 0 {
			t.Errorf("inspect: got %d %s after the tenant's requests, want 0", n, kind)
		}
	}
	grew := dirBytes(t, c.EdgeDataDir()) - before
	t.Logf("stored answers %v; the data dir grew by %d bytes", stored, grew)
	if grew > diskGrowthBound {
		t.Errorf("data dir grew by %d bytes during the tenant's requests, want at most %d", grew, diskGrowthBound)
	}
}

// createTenantPVC creates PVC "data" with a large annotation, and lets
// the tenant's service account get PVCs.
func createTenantPVC(t *testing.T, c *framework.Cluster, ns string) {
	t.Helper()
	ctx := t.Context()
	mustCreate(t, func() error {
		_, err := c.Admin.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Annotations: map[string]string{"disk-test/pad": strings.Repeat("x", diskAnnotationBytes)}},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := c.Admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "get-pvcs"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get"}}}},
			metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := c.Admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "get-pvcs"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "get-pvcs"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: ns}}}, metav1.CreateOptions{})
		return err
	})
}

// tenantDoor sends raw GETs with a bearer token to the pods' door.
type tenantDoor struct {
	base, token string
	client      *http.Client
}

func newTenantDoor(t *testing.T, addr, caFile, token string) *tenantDoor {
	t.Helper()
	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatalf("door CA: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatalf("door CA %s: no certificate", caFile)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: diskWorkers}
	t.Cleanup(tr.CloseIdleConnections)
	return &tenantDoor{base: "https://" + addr, token: token, client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// get returns the status of a GET of path with accept; 0 on a failure to
// send it.
func (d *tenantDoor) get(path, accept string) int {
	req, err := http.NewRequest(http.MethodGet, d.base+path, nil)
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Accept", accept)
	resp, err := d.client.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// getMany sends n GETs, the ith of request(i), from diskWorkers workers,
// and counts the answers by status.
func (d *tenantDoor) getMany(n int, request func(i int) (path, accept string)) map[int]int {
	var mu sync.Mutex
	codes := map[int]int{}
	next := make(chan int)
	var wg sync.WaitGroup
	for range diskWorkers {
		wg.Go(func() {
			for i := range next {
				code := d.get(request(i))
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return codes
}

// inspectStored runs `apiserver-lite inspect -o json` on dataDir and
// returns the count of each kind of stored answer.
func inspectStored(t *testing.T, dataDir string) map[string]int {
	t.Helper()
	b, err := framework.LocateBinaries()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), b.APIServerLite, "inspect", "--data-dir", dataDir, "-o", "json").Output()
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	var doc struct {
		Stored []struct {
			Kind  string `json:"kind"`
			Count int    `json:"count"`
		} `json:"stored"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("inspect output: %v", err)
	}
	got := map[string]int{}
	for _, s := range doc.Stored {
		got[s.Kind] = s.Count
	}
	return got
}

// dirBytes is the size of the files under dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatalf("size of %s: %v", dir, err)
	}
	return n
}
