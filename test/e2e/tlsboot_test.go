//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// podsDoorHost is the pods' door's link-local-style address: a loopback
	// alias, which Linux answers for all of 127.0.0.0/8 without an ip addr
	// line, where a link-local address cannot be added.
	podsDoorHost = "127.0.0.2"
	// servingLifetime is how long the test signer's certificates are valid:
	// the daemon rotates at 70-90% of it, so within about 40 s.
	servingLifetime = 45 * time.Second
	// csrTimeout bounds how long the daemon takes to send its first CSR
	// and serve the signed certificate.
	csrTimeout = time.Minute
	// rotationTimeout bounds the wait for the rotated certificate.
	rotationTimeout = 2 * servingLifetime
	// csrPickup is how soon the daemon, watching its CSR, picks up a
	// signed certificate.
	csrPickup = time.Second
	// probeVolume's subPathExpr makes the hollow kubelet, whose fake runtime
	// keeps no container environment, show the environment it computed: the
	// expanded path is absolute, so the container fails with
	// CreateContainerConfigError and the path in its message.
	probeSubPath = "$(SLASH)$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"
)

// TestTLSBootstrap runs apiserver-lite on the node's credentials with the
// pods' door at a link-local-style address and --tls-bootstrap: its serving
// certificate comes from a kubelet-serving CSR the test approves and signs
// with the cluster CA (no kube-controller-manager runs here), so in-cluster
// clients trusting only the cluster CA verify it; the hollow kubelet gives
// new pods the door as KUBERNETES_SERVICE_HOST/PORT; kube-proxy's identity
// still sees the cloud's default/kubernetes; the certificate rotates
// without dropping open watches, and the last one keeps serving offline.
func TestTLSBootstrap(t *testing.T) {
	const ns = "tenant"
	door := freeAliasAddress(t)
	host, port, _ := net.SplitHostPort(door)
	c := framework.New(t, framework.Options{NodeCredentials: true, EdgeLink: true, Namespaces: []string{ns},
		EdgeArgs: []string{"--secure-listen-address", door, "--tls-bootstrap", "--tls-bootstrap-ip-sans", "127.0.0.1"}})
	pod := createTenant(t, c, ns)
	token := podToken(t, c, ns, "reader", pod)
	proxyToken := kubeProxyToken(t, c) // bound before the daemon asks
	signer := c.StartServingSigner(servingLifetime)
	c.StartEdge()

	first := waitServedCertificate(t, c, door, nil)
	t.Run("certificate verifies against the cluster CA", func(t *testing.T) {
		if got := first.Subject.CommonName; got != "system:node:"+c.NodeName {
			t.Errorf("subject CN %q, want system:node:%s", got, c.NodeName)
		}
		if err := first.VerifyHostname(podsDoorHost); err != nil {
			t.Errorf("certificate does not name %s: %v", podsDoorHost, err)
		}
	})
	inCluster := inClusterClient(t, c, host, port, token)
	t.Run("in-cluster client lists what its RBAC allows", func(t *testing.T) {
		if _, err := inCluster.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{}); err != nil {
			t.Errorf("list configmaps: %v", err)
		}
		if _, err := inCluster.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{}); err == nil {
			t.Error("list secrets: got 200, want 403")
		}
	})
	t.Run("kube-proxy sees the cloud's kubernetes service", func(t *testing.T) {
		proxy := inClusterClient(t, c, host, port, proxyToken)
		// system:node-proxier may list and watch services, not get them.
		list, err := proxy.CoreV1().Services("default").List(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=kubernetes"})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("kube-proxy lists default/kubernetes: got %v, err %v, want one service", list, err)
		}
		svc := list.Items[0]
		if svc.Spec.ClusterIP != "10.0.0.1" || svc.Spec.Ports[0].Port != 443 {
			t.Errorf("kube-proxy: got %s:%d, want the cloud's 10.0.0.1:443", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
		}
	})
	t.Run("kubelet points new pods at the door", func(t *testing.T) { checkPodEnv(t, c, host, port) })
	t.Run("readyz notes the door", func(t *testing.T) {
		resp, err := http.Get(c.EdgeURL + "/readyz?verbose")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if want := "pods-door: " + door + " bound\n"; !strings.Contains(string(body), want) {
			t.Errorf("/readyz?verbose: got\n%s\nwant a line %q", body, want)
		}
	})

	w := openRawWatch(t, c, door, token, ns)
	rotated := waitServedCertificate(t, c, door, w.cert)
	t.Run("rotation keeps open watches", func(t *testing.T) {
		if n := len(signer.Signed()); n < 2 {
			t.Errorf("signed CSRs: got %d, want at least 2", n)
		}
		if !rotated.NotBefore.After(w.cert.NotBefore) {
			t.Errorf("rotated certificate from %s, want after the watch's %s", rotated.NotBefore, w.cert.NotBefore)
		}
		checkWatchAlive(t, c, w, ns, "after-rotation")
	})
	t.Run("offline the last certificate keeps serving", func(t *testing.T) {
		signer.Pause()
		time.Sleep(2 * csrPickup) // a certificate signed just before is picked up
		cloudList, err := c.Admin.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		online := configMapNames(cloudList.Items)
		c.CutLink()
		defer c.RestoreLink()
		signed := signer.Signed()
		last := mustParseCert(t, signed[len(signed)-1].Status.Certificate)
		if got := servedCertificate(t, c, door); !got.Equal(last) {
			t.Errorf("offline: served serial %v, want the last signed %v", got.SerialNumber, last.SerialNumber)
		}
		// Node scope holds configmaps only in part, but the pod's list of
		// its own namespace's online made the node hold them there for
		// it: offline it gets the whole namespace, never a partial list.
		got, err := inCluster.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("in-cluster list offline: %v", err)
		}
		if names := configMapNames(got.Items); !slices.Equal(names, online) {
			t.Errorf("in-cluster list offline: got %v, want the cloud's %v", names, online)
		}
	})
}

// freeAliasAddress is a free port at podsDoorHost.
func freeAliasAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(podsDoorHost, "0"))
	if err != nil {
		t.Skipf("loopback alias %s is not usable here: %v", podsDoorHost, err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// servedCertificate is the pods' door's certificate, verified by a client
// trusting only the cluster CA.
func servedCertificate(t *testing.T, c *framework.Cluster, door string) *x509.Certificate {
	t.Helper()
	cert, err := dialDoor(c, door)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func dialDoor(c *framework.Cluster, door string) (*x509.Certificate, error) {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.ClusterCA())
	conn, err := tls.Dial("tcp", door, &tls.Config{RootCAs: roots, ServerName: podsDoorHost, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// waitServedCertificate waits until the door serves a certificate that
// verifies and is not after.
func waitServedCertificate(t *testing.T, c *framework.Cluster, door string, after *x509.Certificate) *x509.Certificate {
	t.Helper()
	timeout := csrTimeout
	if after != nil {
		timeout = rotationTimeout
	}
	var got *x509.Certificate
	_, err := eventually(t.Context(), timeout, func() (string, error) {
		cert, err := dialDoor(c, door)
		if err != nil {
			return "", err
		}
		if after != nil && cert.Equal(after) {
			return "", fmt.Errorf("still serving serial %v", after.SerialNumber)
		}
		got = cert
		return "", nil
	})
	if err != nil {
		t.Fatalf("pods' door certificate: %v\n%s", err, c.EdgeProcess().Tail(40))
	}
	return got
}

// inClusterClient is what rest.InClusterConfig builds in a pod: the
// service host and port, the projected ca.crt (kube-root-ca.crt) and the
// pod's token.
func inClusterClient(t *testing.T, c *framework.Cluster, host, port, token string) kubernetes.Interface {
	t.Helper()
	cm, err := c.Admin.CoreV1().ConfigMaps("tenant").Get(t.Context(), "kube-root-ca.crt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "https://" + net.JoinHostPort(host, port), BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: []byte(cm.Data["ca.crt"])}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// kubeProxyToken is a token of kube-system/kube-proxy bound to
// system:node-proxier, as kubeadm sets kube-proxy up.
func kubeProxyToken(t *testing.T, c *framework.Cluster) string {
	t.Helper()
	ctx := t.Context()
	mustCreate(t, func() error {
		_, err := c.Admin.CoreV1().ServiceAccounts("kube-system").Create(ctx,
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy"}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := c.Admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "kubeadm:node-proxier"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:node-proxier"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "kube-proxy", Namespace: "kube-system"}}}, metav1.CreateOptions{})
		return err
	})
	tr, err := c.Admin.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "kube-proxy", &authenticationv1.TokenRequest{},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	return tr.Status.Token
}

// checkPodEnv starts the hollow kubelet through the daemon and a pod whose
// volume subPathExpr expands KUBERNETES_SERVICE_HOST and _PORT: the
// kubelet reports the expanded path in the container's waiting message.
func checkPodEnv(t *testing.T, c *framework.Cluster, host, port string) {
	t.Helper()
	c.StartKubemark()
	c.WaitNodeReady()
	ctx := t.Context()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "env-probe"},
		Spec: corev1.PodSpec{NodeName: c.NodeName, Containers: []corev1.Container{{Name: "app", Image: appImage,
			Env:          []corev1.EnvVar{{Name: "SLASH", Value: "/"}},
			VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/probe", SubPathExpr: probeSubPath}}}},
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}},
	}
	if _, err := c.Admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	want := "/" + host + ":" + port
	msg, err := eventually(ctx, podRunningTimeout, func() (string, error) {
		got, err := c.Admin.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		for _, st := range got.Status.ContainerStatuses {
			if w := st.State.Waiting; w != nil && strings.Contains(w.Message, "SubPath") {
				return w.Message, nil
			}
		}
		return "", fmt.Errorf("no container config error yet: %+v", got.Status.ContainerStatuses)
	})
	if err != nil {
		t.Fatalf("pod env probe: %v\n%s", err, tail(c.KubemarkLog(), 40))
	}
	if !strings.Contains(msg, "`"+want+"`") {
		t.Errorf("kubelet's KUBERNETES_SERVICE_HOST:PORT: got %q, want the door %s", msg, want)
	}
}

// rawWatch is a watch over a connection of its own, with the serving
// certificate that connection was opened with.
type rawWatch struct {
	cert  *x509.Certificate
	lines chan string
}

// openRawWatch watches ns's configmaps through the door as the pod's token,
// over a new HTTP/1.1 connection.
func openRawWatch(t *testing.T, c *framework.Cluster, door, token, ns string) *rawWatch {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.ClusterCA())
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet,
		"https://"+door+"/api/v1/namespaces/"+ns+"/configmaps?watch=1&resourceVersion=0", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("watch configmaps: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch configmaps: got %d, want 200", resp.StatusCode)
	}
	t.Cleanup(func() { resp.Body.Close() })
	w := &rawWatch{cert: resp.TLS.PeerCertificates[0], lines: make(chan string, 1024)}
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
	}()
	return w
}

// checkWatchAlive creates a configmap and expects its ADDED on w, which was
// opened before the rotation.
func checkWatchAlive(t *testing.T, c *framework.Cluster, w *rawWatch, ns, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), csrTimeout)
	defer cancel()
	if _, err := c.Admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case line, ok := <-w.lines:
			if !ok {
				t.Fatal("the watch opened before the rotation ended")
			}
			if strings.Contains(line, `"type":"ADDED"`) && strings.Contains(line, `"name":"`+name+`"`) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no ADDED of %s on the watch opened before the rotation", name)
		}
	}
}

func mustParseCert(t *testing.T, pemBytes []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		t.Fatal("signed certificate: no PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// configMapNames are the names of items, sorted.
func configMapNames(items []corev1.ConfigMap) []string {
	out := make([]string, 0, len(items))
	for _, cm := range items {
		out = append(out, cm.Name)
	}
	slices.Sort(out)
	return out
}
