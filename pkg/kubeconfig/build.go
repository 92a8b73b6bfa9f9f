package kubeconfig

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
)

const (
	// DefaultKubeletKubeconfig is where kubeadm writes the kubelet's
	// kubeconfig.
	DefaultKubeletKubeconfig = "/etc/kubernetes/kubelet.conf"
	// GeneratedCAPath is the CA of the serving certificate the daemon
	// generates inside its data dir when tls-cert-file is unset (see
	// auth.ServerTLS).
	GeneratedCAPath = "tls/ca.crt"
	// LocalName names the cluster, user and context of the written
	// kubeconfig.
	LocalName = "apiserver-lite"
	// FileMode keeps the written kubeconfig, which may embed the
	// kubelet's key, to its owner.
	FileMode = 0o600
)

// Options say what the kubeconfig is built from.
type Options struct {
	// KubeletKubeconfig is the kubelet's kubeconfig, whose client
	// certificate the built kubeconfig uses.
	KubeletKubeconfig string
	// CA is the CA of the daemon's serving certificate; empty means the
	// generated one in DataDir, which TLSCertFile being set rules out.
	CA string
	// ListenAddress, DataDir and TLSCertFile are the daemon's settings.
	ListenAddress, DataDir, TLSCertFile string
}

// Build returns the contents of a kubeconfig for the daemon's local door
// that authenticates with the kubelet's client certificate.
func Build(o Options) ([]byte, error) {
	server, err := localServer(o.ListenAddress)
	if err != nil {
		return nil, err
	}
	ca, err := o.servingCA()
	if err != nil {
		return nil, err
	}
	user, err := kubeletUser(o.KubeletKubeconfig)
	if err != nil {
		return nil, err
	}
	out := clientcmdapi.NewConfig()
	out.Clusters[LocalName] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: ca}
	out.AuthInfos[LocalName] = user
	out.Contexts[LocalName] = &clientcmdapi.Context{Cluster: LocalName, AuthInfo: LocalName}
	out.CurrentContext = LocalName
	return clientcmd.Write(*out)
}

// localServer is the URL of the door at listen-address, as a client on
// this node reaches it.
func localServer(listenAddress string) (string, error) {
	if listenAddress == "" {
		return "", errors.New("listen-address is empty: the local door is off")
	}
	host, port, err := net.SplitHostPort(listenAddress)
	if err != nil {
		return "", fmt.Errorf("listen-address %q: %w", listenAddress, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "https://" + net.JoinHostPort(host, port), nil
}

// servingCA returns the absolute path of the CA of the daemon's serving
// certificate, checked to hold one.
func (o Options) servingCA() (string, error) {
	path := o.CA
	if path == "" {
		if o.TLSCertFile != "" {
			return "", fmt.Errorf("tls-cert-file %s is set: pass --certificate-authority with the CA that issued it", o.TLSCertFile)
		}
		path = filepath.Join(o.DataDir, GeneratedCAPath)
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	pem, err := readCredential(path)
	if err != nil {
		if o.CA == "" && errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w (the daemon generates it when it starts without tls-cert-file)", err)
		}
		return "", err
	}
	if _, err := certutil.ParseCertsPEM(pem); err != nil {
		return "", fmt.Errorf("certificate authority %s: %w", path, err)
	}
	return path, nil
}

// kubeletUser returns the client certificate and key of the current user of
// the kubeconfig at path, with relative paths resolved against that file.
func kubeletUser(path string) (*clientcmdapi.AuthInfo, error) {
	if _, err := readCredential(path); err != nil {
		return nil, err
	}
	kc, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("kubelet kubeconfig: %w", err)
	}
	if err := clientcmd.ResolveLocalPaths(kc); err != nil {
		return nil, fmt.Errorf("kubelet kubeconfig %s: %w", path, err)
	}
	ctx, ok := kc.Contexts[kc.CurrentContext]
	if !ok {
		return nil, fmt.Errorf("kubelet kubeconfig %s: current context %q not found", path, kc.CurrentContext)
	}
	ai, ok := kc.AuthInfos[ctx.AuthInfo]
	if !ok {
		return nil, fmt.Errorf("kubelet kubeconfig %s: user %q not found", path, ctx.AuthInfo)
	}
	user := &clientcmdapi.AuthInfo{ClientCertificate: ai.ClientCertificate, ClientCertificateData: ai.ClientCertificateData,
		ClientKey: ai.ClientKey, ClientKeyData: ai.ClientKeyData}
	if err := checkClientPair(user); err != nil {
		return nil, fmt.Errorf("kubelet kubeconfig %s, user %q: %w", path, ctx.AuthInfo, err)
	}
	return user, nil
}

// checkClientPair checks that user has a client certificate and key, from
// files or embedded, and that they form a pair.
func checkClientPair(user *clientcmdapi.AuthInfo) error {
	cert, key := user.ClientCertificateData, user.ClientKeyData
	var err error
	if len(cert) == 0 && user.ClientCertificate != "" {
		if cert, err = readCredential(user.ClientCertificate); err != nil {
			return err
		}
	}
	if len(key) == 0 && user.ClientKey != "" {
		if key, err = readCredential(user.ClientKey); err != nil {
			return err
		}
	}
	if len(cert) == 0 || len(key) == 0 {
		return errors.New("no client certificate and key (a token or exec plugin cannot be used)")
	}
	if _, err := tls.X509KeyPair(cert, key); err != nil {
		return fmt.Errorf("client certificate and key: %w", err)
	}
	return nil
}

// readCredential reads a file, naming root when it may not be read.
func readCredential(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrPermission) && os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: run as root, the kubelet's credentials are root's", err)
	}
	return data, err
}

// WritePrivateFile writes data to path with mode 0600 through a rename, so
// the file is never readable by others, even for a moment.
func WritePrivateFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*") // mode 0600
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err = errors.Join(err, f.Chmod(FileMode), f.Sync(), f.Close()); err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
