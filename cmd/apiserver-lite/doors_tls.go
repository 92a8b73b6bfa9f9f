package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"k8s.io/client-go/rest"
)

// cloudCAFile holds the cloud kubeconfig's embedded CA inside the data
// dir's tls folder when it serves as the doors' client CA. It is public.
const (
	cloudCAFile     = "cloud-ca.crt"
	publicFileMode  = 0o644
	tlsDirInDataDir = "tls"
)

// doorsTLS loads or generates the TLS doors' serving certificate and picks
// their client CA.
func doorsTLS(cfg config, cloud *rest.Config, sealer door.KeySealer, log *slog.Logger) (*tls.Config, error) {
	clientCA, err := clientCAFile(cfg, cloud, log)
	if err != nil {
		return nil, err
	}
	o := door.TLSOptions{CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSPrivateKeyFile, ClientCAFile: clientCA,
		DataDir: cfg.DataDir, Host: cfg.NodeName, DNS: []string{"localhost"},
		IPs: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, Logger: log, KeySealer: sealer}
	for _, addr := range []string{cfg.ListenAddress, cfg.SecureListenAddress} {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
				o.IPs = append(o.IPs, ip)
			}
		}
	}
	tlsCfg, caPath, err := door.ServerTLS(o, time.Now())
	if err != nil {
		return nil, fmt.Errorf("tls doors: %w", err)
	}
	if caPath != "" {
		log.Info("tls doors use a generated serving certificate", "ca", caPath)
	}
	return tlsCfg, nil
}

// clientCAFile is client-ca-file, else the cloud kubeconfig's CA (a file
// it names, or its embedded data written beside the serving certificate):
// on a kubeadm node the cluster CA signs the kubelet's client certificate.
// Without either, only bearer tokens authenticate.
func clientCAFile(cfg config, cloud *rest.Config, log *slog.Logger) (string, error) {
	switch {
	case cfg.ClientCAFile != "":
		return cfg.ClientCAFile, nil
	case cloud.TLSClientConfig.CAFile != "":
		log.Info("tls doors accept client certificates signed by the cloud kubeconfig's CA", "ca", cloud.TLSClientConfig.CAFile)
		return cloud.TLSClientConfig.CAFile, nil
	case len(cloud.TLSClientConfig.CAData) > 0:
		dir := filepath.Join(cfg.DataDir, tlsDirInDataDir)
		if err := os.MkdirAll(dir, dataDirMode); err != nil {
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
