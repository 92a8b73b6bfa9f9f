//go:build e2e

package framework

import (
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// DefaultNodeName is the edge node name when Options.NodeName is empty.
const DefaultNodeName = "edge-1"

// logTailLines is how many lines of each process log a failed test prints.
const logTailLines = 60

// Options configure a test cluster.
type Options struct {
	// NodeName is the edge node apiserver-lite serves; DefaultNodeName if empty.
	NodeName string
	// WatchCacheSize, when positive, is passed as --watch-cache-size.
	WatchCacheSize int
	// Namespaces are prepared like "default": ServiceAccount default and
	// ConfigMap kube-root-ca.crt, which no controller-manager creates here.
	Namespaces []string
	// CloudArgs are extra kube-apiserver flags, appended after the
	// framework's own.
	CloudArgs []string
	// EdgeLink routes apiserver-lite's cloud connection through a loopback
	// proxy that CutLink and RestoreLink control; the admin keeps its
	// direct connection.
	EdgeLink bool
	// OverloadGate routes apiserver-lite's cloud connection through a TLS
	// proxy that Overload makes answer 429 with Retry-After; not with
	// EdgeLink.
	OverloadGate bool
	// NodeCredentials gives apiserver-lite the node's own identity
	// (CN=system:node:<NodeName>, O=system:nodes) instead of a user of its
	// own, enables the NodeRestriction admission plugin and grants the
	// edge no RBAC: apiserver-lite runs in node scope.
	NodeCredentials bool
	// NodeRestriction enables the NodeRestriction admission plugin in
	// cluster scope too, where the node's writes go out impersonating it.
	NodeRestriction bool
	// EdgeArgs are extra apiserver-lite flags, appended after the
	// framework's own.
	EdgeArgs []string
	// NoEncryptionKey starts apiserver-lite without --encryption-key-file;
	// by default it gets a state key, as the systemd unit does.
	NoEncryptionKey bool
	// AuditLog makes kube-apiserver log every request, read back with
	// CloudRequests.
	AuditLog bool
	// HeldSockets makes the harness hold apiserver-lite's two doors and
	// pass them to each start as systemd's socket activation does
	// (HeldSockets), so a restart queues connections instead of refusing.
	HeldSockets bool
	// AuditSARBodies also logs the bodies of SubjectAccessReviews (with
	// AuditLog), so a test reads the identity a reviewer asked about.
	AuditSARBodies bool
}

// Cluster is one cloud control plane and one apiserver-lite edge node, all
// on loopback with state under Dir. Methods fail the test on error.
type Cluster struct {
	t    testing.TB
	opts Options

	// Dir holds the state and logs of every process of this cluster.
	Dir      string
	Bins     Binaries
	NodeName string
	pki      *pki

	// CloudURL is kube-apiserver's https URL; EdgeURL is apiserver-lite's
	// insecure (plain http) door, where every caller acts as the node;
	// DoorURL is its authenticated HTTPS door (listen-address), the
	// kubelet's. All keep their port across restarts.
	CloudURL string
	EdgeURL  string
	DoorURL  string
	// EdgePort is the port of EdgeURL, DoorPort of DoorURL; cloudPort the
	// port of CloudURL.
	EdgePort  int
	DoorPort  int
	cloudPort int
	// etcdURL is etcd's client URL.
	etcdURL string

	// AdminKubeconfig authenticates as system:masters to the cloud.
	// EdgeCloudKubeconfig is apiserver-lite's own credential to the cloud.
	// EdgeLocalKubeconfig points at EdgeURL without credentials.
	// KubeletKubeconfig points at DoorURL with the node's own client
	// certificate and apiserver-lite's CA; it is written by StartEdge.
	AdminKubeconfig     string
	EdgeCloudKubeconfig string
	EdgeLocalKubeconfig string
	KubeletKubeconfig   string
	// EncryptionKeyFile is apiserver-lite's state key; "" with
	// Options.NoEncryptionKey.
	EncryptionKeyFile string

	AdminConfig *rest.Config
	Admin       kubernetes.Interface

	etcd      *Process
	apiserver *Process
	edge      *Process
	kubemark  *Process
	// proxy is the hollow kube-proxy and coredns CoreDNS, nil until
	// started; corednsAddr is CoreDNS's address, fixed at its first start.
	proxy       *Process
	coredns     *Process
	corednsAddr string
	// flanneld is the CNI agent, nil until StartFlanneld.
	flanneld *Process
	// link is the edge's cloud link proxy; nil unless Options.EdgeLink.
	link *linkProxy
	// gate is the edge's overload gate; nil unless Options.OverloadGate.
	gate *overloadGate

	mu sync.Mutex
	// procs lists every process ever created, in start order, for teardown
	// and log dumps. Guarded by mu.
	procs []*Process
	// nextFleetPort is where mustFleetPort looks next. Guarded by mu.
	nextFleetPort int
}

// New starts etcd and kube-apiserver with Node,RBAC authorization, applies
// the cluster-scope RBAC (unless NodeCredentials) and prepares namespaces. Call StartEdge to add
// apiserver-lite. Everything is torn down when the test ends.
func New(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.NodeName == "" {
		opts.NodeName = DefaultNodeName
	}
	c := &Cluster{t: t, opts: opts, NodeName: opts.NodeName}
	c.Dir = workDir(t)
	bins, err := LocateBinaries()
	if err != nil {
		t.Fatalf("locate binaries: %v", err)
	}
	c.Bins = bins
	t.Cleanup(c.teardown)
	c.writeCredentials()
	c.writeStateKey()
	if opts.EdgeLink {
		c.startLink()
	}
	if opts.OverloadGate {
		c.startOverloadGate()
	}
	c.startEtcd()
	c.startAPIServer()
	if !opts.NodeCredentials {
		c.applyRBAC()
	}
	for _, ns := range append([]string{"default"}, opts.Namespaces...) {
		c.CreateNamespace(ns)
	}
	return c
}

// workDir returns the dir for one test's state: kept under EnvArtifacts if
// set, else a t.TempDir removed after the test.
func workDir(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvArtifacts)
	if base == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatalf("create artifacts dir: %v", err)
	}
	safe := regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_")
	dir, err := os.MkdirTemp(base, safe+"-")
	if err != nil {
		t.Fatalf("create artifacts dir: %v", err)
	}
	t.Logf("state and logs kept in %s", dir)
	return dir
}

// newProcess registers a process whose log is Dir/<name>.log.
func (c *Cluster) newProcess(name, path string, args ...string) *Process {
	p := &Process{Name: name, Path: path, Args: args, LogPath: filepath.Join(c.Dir, name+".log")}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p
}

// startProcess starts p or fails the test.
func (c *Cluster) startProcess(p *Process) {
	c.t.Helper()
	if err := p.Start(); err != nil {
		c.t.Fatalf("%v", err)
	}
}

// teardown kills every process in reverse start order, dumps their logs
// if the test failed, and removes what kubemark left outside Dir.
func (c *Cluster) teardown() {
	c.mu.Lock()
	procs := append([]*Process(nil), c.procs...)
	c.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		if err := procs[i].Stop(); err != nil {
			c.t.Errorf("teardown: %v", err)
		}
	}
	if c.t.Failed() {
		for _, p := range procs {
			c.t.Logf("---- last %d lines of %s (%s) ----\n%s", logTailLines, p.Name, p.LogPath, p.Tail(logTailLines))
		}
	}
	if c.kubemark != nil {
		removeKubemarkRootDirs(c.t, c.kubemark.LogPath)
	}
}
