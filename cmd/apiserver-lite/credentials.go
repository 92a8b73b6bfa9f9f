package main

import (
	"log/slog"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// certRotationCheck is how often open cloud connections check whether the
// client certificate files changed, and are re-established with the new
// certificate if so. client-go re-reads the files on every new connection
// (caching them for a second); this bounds how long long-lived watches
// keep using a certificate the kubelet has rotated away from (client-go's
// default is 5 minutes).
const certRotationCheck = time.Minute

// client-go's certificate reload interval is a process-wide setting its
// certificate goroutines read at any time, so it is set before any client
// exists.
func init() { transport.CertCallbackRefreshDuration = certRotationCheck }

// useRotatingCredentials makes client certificate files named by the
// kubeconfig take effect without a restart. client-go reloads them only
// when the kubeconfig names files (client-certificate and client-key, as
// a kubelet's kubeconfig does with kubelet-client-current.pem), not when
// it embeds the data.
func useRotatingCredentials(c *rest.Config, log *slog.Logger) {
	switch {
	case c.CertFile != "" && c.KeyFile != "" && len(c.CertData) == 0 && len(c.KeyData) == 0:
		log.Info("cloud client certificate is reloaded when its files change", "cert", c.CertFile, "key", c.KeyFile)
	case len(c.CertData) > 0:
		log.Info("cloud client certificate is embedded in the kubeconfig; it changes only with a restart")
	}
}
