package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
)

const (
	// defaultKubeletKubeconfig is where kubeadm writes the kubelet's
	// kubeconfig.
	defaultKubeletKubeconfig = "/etc/kubernetes/kubelet.conf"
	// generatedCAPath is the CA of the serving certificate the daemon
	// generates inside its data dir when tls-cert-file is unset (see
	// auth.ServerTLS).
	generatedCAPath = "tls/ca.crt"
	// localName names the cluster, user and context of the written
	// kubeconfig.
	localName = "apiserver-lite"
	// kubeconfigMode keeps the written kubeconfig, which may embed the
	// kubelet's key, to its owner.
	kubeconfigMode = 0o600
)

const kubeconfigLong = `Write a kubeconfig for the daemon's local door (listen-address) that
authenticates with the kubelet's client certificate, so that
'kubectl --kubeconfig FILE' on the node sees what the kubelet sees.

The certificate and key are taken from the current user of the kubelet's
kubeconfig: paths (made absolute, so a rotated certificate is followed) or
embedded data. The server's CA is the daemon's generated one,
<data-dir>/tls/ca.crt, or --certificate-authority when tls-cert-file is set.
The listen-address and data-dir are read as the daemon reads them (--config,
APISERVER_LITE_* environment, defaults). The kubelet's key is readable by root
only, so this is meant to run as root; the file is written with mode 0600.`

// kubeconfigOptions are the flags of `apiserver-lite kubeconfig`.
type kubeconfigOptions struct {
	kubelet, config, ca, output string
}

func newKubeconfigCommand() *cobra.Command {
	var o kubeconfigOptions
	cmd := &cobra.Command{Use: "kubeconfig [--output FILE]",
		Short: "Write a kubeconfig for the local door from the kubelet's credentials (root only)",
		Long:  kubeconfigLong, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := o.build()
			if err != nil {
				return err
			}
			if o.output == "" || o.output == "-" {
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			return writePrivateFile(o.output, data)
		}}
	fs := cmd.Flags()
	fs.StringVar(&o.kubelet, "kubelet-kubeconfig", defaultKubeletKubeconfig, "the kubelet's kubeconfig, whose client certificate the written kubeconfig uses")
	fs.StringVar(&o.config, "config", "", "the daemon's config file, for its listen-address and data-dir")
	fs.StringVar(&o.ca, "certificate-authority", "", "CA of the daemon's serving certificate; default: the generated <data-dir>/tls/ca.crt")
	fs.StringVar(&o.output, "output", "", "write to this file (mode 0600) instead of standard output")
	return cmd
}

// build returns the kubeconfig's contents.
func (o kubeconfigOptions) build() ([]byte, error) {
	var args []string
	if o.config != "" {
		args = []string{"--config", o.config}
	}
	cfg, err := loadConfig(args)
	if err != nil {
		return nil, err
	}
	server, err := localServer(cfg.ListenAddress)
	if err != nil {
		return nil, err
	}
	ca, err := o.servingCA(cfg)
	if err != nil {
		return nil, err
	}
	user, err := kubeletUser(o.kubelet)
	if err != nil {
		return nil, err
	}
	out := clientcmdapi.NewConfig()
	out.Clusters[localName] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: ca}
	out.AuthInfos[localName] = user
	out.Contexts[localName] = &clientcmdapi.Context{Cluster: localName, AuthInfo: localName}
	out.CurrentContext = localName
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
func (o kubeconfigOptions) servingCA(cfg config) (string, error) {
	path := o.ca
	if path == "" {
		if cfg.TLSCertFile != "" {
			return "", fmt.Errorf("tls-cert-file %s is set: pass --certificate-authority with the CA that issued it", cfg.TLSCertFile)
		}
		path = filepath.Join(cfg.DataDir, generatedCAPath)
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	pem, err := readCredential(path)
	if err != nil {
		if o.ca == "" && errors.Is(err, fs.ErrNotExist) {
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

// writePrivateFile writes data to path with mode 0600 through a rename, so
// the file is never readable by others, even for a moment.
func writePrivateFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*") // mode 0600
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err = errors.Join(err, f.Chmod(kubeconfigMode), f.Sync(), f.Close()); err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
