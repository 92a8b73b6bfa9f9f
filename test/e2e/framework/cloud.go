//go:build e2e

package framework

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// etcdReadyTimeout bounds etcd's start until /health answers.
const etcdReadyTimeout = 30 * time.Second

// cloudReadyTimeout bounds kube-apiserver's start until /readyz is OK; it
// takes about 15 s on two cores, more under -race load.
const cloudReadyTimeout = 2 * time.Minute

// writeCredentials creates Dir/pki, picks the cloud and edge ports and
// writes the admin and apiserver-lite kubeconfigs.
func (c *Cluster) writeCredentials() {
	c.t.Helper()
	dir := filepath.Join(c.Dir, "pki")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		c.t.Fatalf("create pki dir: %v", err)
	}
	p, err := writePKI(dir, c.NodeName, c.opts.NodeCredentials)
	if err != nil {
		c.t.Fatalf("write pki: %v", err)
	}
	c.pki = p
	c.cloudPort, c.EdgePort, c.DoorPort = c.mustFreePort(), c.mustFreePort(), c.mustFreePort()
	c.CloudURL = "https://" + loopback(c.cloudPort)
	c.EdgeURL = "http://" + loopback(c.EdgePort)
	c.DoorURL = "https://" + loopback(c.DoorPort)
	c.KubeletKubeconfig = filepath.Join(c.Dir, "kubelet.kubeconfig")
	c.AdminKubeconfig = filepath.Join(c.Dir, "admin.kubeconfig")
	c.EdgeCloudKubeconfig = filepath.Join(c.Dir, "apiserver-lite.kubeconfig")
	c.EdgeLocalKubeconfig = filepath.Join(c.Dir, "edge-local.kubeconfig")
	writes := []error{
		writeKubeconfig(c.AdminKubeconfig, c.CloudURL, p.CAPEM, &p.admin),
		writeKubeconfig(c.EdgeCloudKubeconfig, c.CloudURL, p.CAPEM, &p.edge),
		writeKubeconfig(c.EdgeLocalKubeconfig, c.EdgeURL, nil, nil),
	}
	for _, err := range writes {
		if err != nil {
			c.t.Fatalf("%v", err)
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.AdminKubeconfig)
	if err != nil {
		c.t.Fatalf("load admin kubeconfig: %v", err)
	}
	c.AdminConfig = cfg
	if c.Admin, err = kubernetes.NewForConfig(cfg); err != nil {
		c.t.Fatalf("admin clientset: %v", err)
	}
}

func (c *Cluster) mustFreePort() int {
	c.t.Helper()
	port, err := FreePort()
	if err != nil {
		c.t.Fatalf("%v", err)
	}
	return port
}

// startEtcd starts a single-member etcd with state in Dir/etcd and waits
// until it is healthy.
func (c *Cluster) startEtcd() {
	c.t.Helper()
	client := "http://" + loopback(c.mustFreePort())
	peer := "http://" + loopback(c.mustFreePort())
	c.etcd = c.newProcess("etcd", c.Bins.Etcd,
		"--name", "e2e",
		"--data-dir", filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "e2e="+peer,
		// The cloud's durability is not under test; skip fsync for speed.
		"--unsafe-no-fsync",
	)
	c.startProcess(c.etcd)
	check := httpOK(&http.Client{}, client+"/health")
	if err := waitFor(c.t.Context(), c.etcd, "etcd /health", etcdReadyTimeout, check); err != nil {
		c.t.Fatalf("%v\n%s", err, c.etcd.Tail(logTailLines))
	}
	c.etcdURL = client
}

// startAPIServer creates the kube-apiserver process on CloudURL's port and
// runs it until /readyz is OK.
func (c *Cluster) startAPIServer() {
	c.t.Helper()
	p := c.pki
	c.apiserver = c.newProcess("kube-apiserver", c.Bins.KubeAPIServer,
		"--etcd-servers", c.etcdURL,
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(c.cloudPort),
		"--cert-dir", filepath.Join(c.Dir, "apiserver-certs"),
		"--tls-cert-file", p.ServingCert, "--tls-private-key-file", p.ServingKey,
		"--client-ca-file", p.CACert,
		"--authorization-mode", "Node,RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", p.SAPub,
		"--service-account-signing-key-file", p.SAKey,
		"--service-cluster-ip-range", serviceClusterIPRange,
	)
	if c.opts.NodeCredentials || c.opts.NodeRestriction {
		c.apiserver.Args = append(c.apiserver.Args, "--enable-admission-plugins", "NodeRestriction")
	}
	if c.opts.AuditLog {
		c.apiserver.Args = append(c.apiserver.Args, c.auditArgs()...)
	}
	c.apiserver.Args = append(c.apiserver.Args, c.opts.CloudArgs...)
	c.StartCloud()
}

// StartCloud starts kube-apiserver again on the same port and etcd data
// after StopCloud, and waits until its /readyz is OK.
func (c *Cluster) StartCloud() {
	c.t.Helper()
	c.StartCloudRetrying(1)
}

// StartCloudRetrying starts kube-apiserver and waits until it is ready,
// starting it again, up to maxStarts starts in all, when it exits first: on
// a machine loaded by many clients a restarted kube-apiserver can exit when
// a post-start hook (the service IP repair) fails on etcd reads that time
// out. It returns how many starts it took.
func (c *Cluster) StartCloudRetrying(maxStarts int) int {
	c.t.Helper()
	for starts := 1; ; starts++ {
		c.startProcess(c.apiserver)
		err := c.waitCloudReady()
		if err == nil {
			return starts
		}
		select {
		case <-c.apiserver.Exited():
			if starts < maxStarts {
				c.t.Logf("kube-apiserver exited before it was ready, starting it again: %v", err)
				continue
			}
		default:
		}
		c.t.Fatalf("%v\n%s", err, c.apiserver.Tail(logTailLines))
	}
}

// StopCloud kills kube-apiserver, as in a sudden cloud outage. etcd keeps
// running with its data.
func (c *Cluster) StopCloud() {
	c.t.Helper()
	if err := c.apiserver.Kill(); err != nil {
		c.t.Fatalf("stop cloud: %v", err)
	}
}

func (c *Cluster) waitCloudReady() error {
	client, err := rest.HTTPClientFor(c.AdminConfig)
	if err != nil {
		return fmt.Errorf("admin http client: %w", err)
	}
	check := httpOK(client, c.CloudURL+"/readyz")
	return waitFor(c.t.Context(), c.apiserver, "kube-apiserver /readyz", cloudReadyTimeout, check)
}
