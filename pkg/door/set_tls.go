package door

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

const (
	// cloudCAFile holds the cloud kubeconfig's embedded CA inside the
	// data dir's tls folder when it serves as the doors' client CA. It is
	// public.
	cloudCAFile = "cloud-ca.crt"
	// privateDirMode is the tls folder's mode when the cloud's CA creates
	// it, the data dir's: ServerTLS opens it to clients when it generates a
	// certificate there.
	privateDirMode = 0o700
)

// SetTLS are the TLS doors' certificate settings, kube-apiserver's flags.
type SetTLS struct {
	CertFile, KeyFile string
	// ClientCAFile is the CA of the client certificates the TLS doors
	// accept; empty: the cloud kubeconfig's CA.
	ClientCAFile string
	// DataDir receives generated and bootstrapped certificates.
	DataDir string
}

// setTLS loads or generates the TLS doors' serving certificate and picks
// their client CA.
func setTLS(c SetConfig) (*tls.Config, error) {
	clientCA, err := clientCAFile(c)
	if err != nil {
		return nil, err
	}
	o := TLSOptions{CertFile: c.TLS.CertFile, KeyFile: c.TLS.KeyFile, ClientCAFile: clientCA,
		DataDir: c.TLS.DataDir, Host: c.NodeName, DNS: []string{"localhost"},
		IPs: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, Logger: c.Logger, KeySealer: c.KeySealer}
	for _, addr := range []string{c.ListenAddress, c.SecureListenAddress} {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
				o.IPs = append(o.IPs, ip)
			}
		}
	}
	tlsCfg, caPath, err := ServerTLS(o, time.Now())
	if err != nil {
		return nil, fmt.Errorf("tls doors: %w", err)
	}
	if caPath != "" {
		c.Logger.Info("tls doors use a generated serving certificate", "ca", caPath)
	}
	return tlsCfg, nil
}

// clientCAFile is ClientCAFile, else the cloud kubeconfig's CA (a file
// it names, or its embedded data written beside the serving certificate):
// on a kubeadm node the cluster CA signs the kubelet's client certificate.
// Without either, only bearer tokens authenticate.
func clientCAFile(c SetConfig) (string, error) {
	cloud, log := c.Cloud, c.Logger
	switch {
	case c.TLS.ClientCAFile != "":
		return c.TLS.ClientCAFile, nil
	case cloud.TLSClientConfig.CAFile != "":
		log.Info("tls doors accept client certificates signed by the cloud kubeconfig's CA", "ca", cloud.TLSClientConfig.CAFile)
		return cloud.TLSClientConfig.CAFile, nil
	case len(cloud.TLSClientConfig.CAData) > 0:
		dir := filepath.Join(c.TLS.DataDir, servingDir)
		if err := os.MkdirAll(dir, privateDirMode); err != nil {
			return "", fmt.Errorf("create %s: %w", dir, err)
		}
		path := filepath.Join(dir, cloudCAFile)
		if err := os.WriteFile(path, cloud.TLSClientConfig.CAData, publicFileMode); err != nil {
			return "", fmt.Errorf("write client ca: %w", err)
		}
		log.Info("tls doors accept client certificates signed by the cloud kubeconfig's CA", "ca", path)
		return path, nil
	}
	log.Warn("no client-ca-file and no CA in the cloud kubeconfig: the tls doors accept bearer tokens only")
	return "", nil
}
