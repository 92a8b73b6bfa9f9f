//go:build e2e

package framework

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// serviceClusterIPRange is the cloud's service CIDR; its first address is the
// in-cluster kubernetes service, which the serving certificate also names.
const serviceClusterIPRange = "10.0.0.0/24"

// kubernetesServiceIP is the first address of serviceClusterIPRange.
const kubernetesServiceIP = "10.0.0.1"

// Identities the cloud authenticates by client certificate.
const (
	adminUser   = "e2e-admin"
	adminGroup  = "system:masters"
	edgeGroup   = "apiserver-lite"
	edgeUserFmt = "apiserver-lite:%s"
	// The Node authorizer's identity of a node.
	nodeGroup   = "system:nodes"
	nodeUserFmt = "system:node:%s"
)

// pki holds the paths of a test cluster's credentials, all under Dir.
type pki struct {
	Dir         string
	CACert      string // CA that signs serving and client certificates
	ServingCert string // kube-apiserver serving certificate
	ServingKey  string
	SAKey       string // service account token signing key
	SAPub       string // service account token verification key
	CAPEM       []byte

	admin   keyPair // CN=e2e-admin, O=system:masters
	edge    keyPair // CN=apiserver-lite:<node>, O=apiserver-lite; or the node's own
	kubelet keyPair // CN=system:node:<node>, O=system:nodes: the kubelet's own
	// ca issues the certificates of more nodes (see AddNode).
	ca *authority
}

// writePKI generates a CA, the kube-apiserver serving certificate, the
// service account key pair and the admin and apiserver-lite client
// certificates, and writes the files kube-apiserver reads into dir. With
// nodeCreds, apiserver-lite's certificate is the node's own
// (CN=system:node:<node>, O=system:nodes).
func writePKI(dir, nodeName string, nodeCreds bool) (*pki, error) {
	ca, err := newAuthority("apiserver-lite-e2e-ca")
	if err != nil {
		return nil, err
	}
	serving, err := ca.issueServing("kube-apiserver",
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(kubernetesServiceIP)},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"})
	if err != nil {
		return nil, err
	}
	saKey, saPub, err := newServiceAccountKey()
	if err != nil {
		return nil, err
	}
	p := &pki{
		Dir: dir, CACert: filepath.Join(dir, "ca.crt"),
		ServingCert: filepath.Join(dir, "apiserver.crt"), ServingKey: filepath.Join(dir, "apiserver.key"),
		SAKey: filepath.Join(dir, "sa.key"), SAPub: filepath.Join(dir, "sa.pub"), CAPEM: ca.certPEM, ca: ca,
	}
	if p.admin, err = ca.issueClient(adminUser, adminGroup); err != nil {
		return nil, err
	}
	edgeUser, group := fmt.Sprintf(edgeUserFmt, nodeName), edgeGroup
	if nodeCreds {
		edgeUser, group = fmt.Sprintf(nodeUserFmt, nodeName), nodeGroup
	}
	if p.edge, err = ca.issueClient(edgeUser, group); err != nil {
		return nil, err
	}
	if p.kubelet, err = ca.issueClient(fmt.Sprintf(nodeUserFmt, nodeName), nodeGroup); err != nil {
		return nil, err
	}
	files := map[string][]byte{
		p.CACert: ca.certPEM, p.ServingCert: serving.CertPEM, p.ServingKey: serving.KeyPEM,
		p.SAKey: saKey, p.SAPub: saPub,
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
	}
	return p, nil
}

// writeKubeconfig writes a kubeconfig for server. caPEM and client may be
// nil for a plain HTTP server without authentication.
func writeKubeconfig(path, server string, caPEM []byte, client *keyPair) error {
	const name = "e2e"
	cluster := &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	user := &clientcmdapi.AuthInfo{}
	if client != nil {
		user.ClientCertificateData, user.ClientKeyData = client.CertPEM, client.KeyPEM
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = cluster
	cfg.AuthInfos[name] = user
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = name
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}
