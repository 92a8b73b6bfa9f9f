package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/kubeservice"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Values of rewrite-kubernetes-service.
const (
	rewriteAuto = "auto"
	rewriteOn   = "true"
	rewriteOff  = "false"
)

var rewriteValues = []string{rewriteAuto, rewriteOn, rewriteOff}

// bootstrapConfig are the settings that put the pods' door in the path of
// in-cluster clients: a serving certificate the cluster CA signs, and the
// kubernetes Service pointed at the door in what the kubelet reads.
type bootstrapConfig struct {
	// TLSBootstrap requests the pods' door's serving certificate from the
	// cloud with a kubernetes.io/kubelet-serving CSR on the node's
	// credentials.
	TLSBootstrap bool `mapstructure:"tls-bootstrap"`
	// TLSBootstrapIPSANs are IP SANs beyond the door's own address (e.g.
	// the node's IPs).
	TLSBootstrapIPSANs []string `mapstructure:"tls-bootstrap-ip-sans"`
	// TLSBootstrapLifetime, when positive, is the CSR's
	// spec.expirationSeconds.
	TLSBootstrapLifetime time.Duration `mapstructure:"tls-bootstrap-lifetime"`
	// RewriteKubernetesService is auto (on with tls-bootstrap and a
	// secure-listen-address at a specific IP), true or false.
	RewriteKubernetesService string `mapstructure:"rewrite-kubernetes-service"`
}

func addBootstrapFlags(fs *pflag.FlagSet) {
	fs.Bool("tls-bootstrap", false,
		"request the secure-listen-address door's serving certificate (in place of tls-cert-file's) from the cloud with a CertificateSigningRequest "+
			"(signer kubernetes.io/kubelet-serving, user system:node:<node-name>), so pods trusting the cluster CA verify it; "+
			"someone must approve the CSR (kubectl certificate approve)")
	fs.StringSlice("tls-bootstrap-ip-sans", nil, "extra IP addresses for the bootstrapped certificate besides the door's, e.g. the node's IPs")
	fs.Duration("tls-bootstrap-lifetime", 0,
		"requested lifetime of the bootstrapped certificate (CSR spec.expirationSeconds, at least 10m); 0: the signer's default")
	fs.String("rewrite-kubernetes-service", rewriteAuto,
		"show default/kubernetes at the secure-listen-address door in what the node's identity reads, so the kubelet "+
			"points new pods' KUBERNETES_SERVICE_HOST/PORT at it: true, false, or auto (on with --tls-bootstrap)")
}

// minBootstrapLifetime is the shortest spec.expirationSeconds kube-apiserver
// accepts on a CSR (600 s).
const minBootstrapLifetime = 10 * time.Minute

func (c config) validateBootstrap() error {
	var errs []error
	if c.TLSBootstrap && c.SecureListenAddress == "" {
		errs = append(errs, errors.New("tls-bootstrap needs secure-listen-address: the bootstrapped certificate serves that door"))
	}
	for _, s := range c.TLSBootstrapIPSANs {
		if net.ParseIP(s) == nil {
			errs = append(errs, fmt.Errorf("tls-bootstrap-ip-sans: %q is not an IP address", s))
		}
	}
	if c.TLSBootstrapLifetime != 0 && c.TLSBootstrapLifetime < minBootstrapLifetime {
		errs = append(errs, fmt.Errorf("tls-bootstrap-lifetime must be 0 or at least %s, got %s", minBootstrapLifetime, c.TLSBootstrapLifetime))
	}
	if !slices.Contains(rewriteValues, c.RewriteKubernetesService) {
		errs = append(errs, fmt.Errorf("rewrite-kubernetes-service %q: want auto, true or false", c.RewriteKubernetesService))
	}
	if c.RewriteKubernetesService == rewriteOn {
		if _, err := c.podsDoor(); err != nil {
			errs = append(errs, fmt.Errorf("rewrite-kubernetes-service: %w", err))
		}
	}
	return errors.Join(errs...)
}

// podsDoor is secure-listen-address as a specific address and port.
func (c config) podsDoor() (netip.AddrPort, error) {
	return door.PodsDoorAddress(c.SecureListenAddress)
}

// rewritesKubernetesService reports whether the node is shown
// default/kubernetes at the pods' door.
func (c config) rewritesKubernetesService() bool {
	switch c.RewriteKubernetesService {
	case rewriteOn:
		return true
	case rewriteAuto:
		_, err := c.podsDoor()
		return c.TLSBootstrap && err == nil
	}
	return false
}

// bootstrapIPs are the bootstrapped certificate's IP SANs.
func (c config) bootstrapIPs() []net.IP {
	return door.BootstrapIPs(c.SecureListenAddress, c.TLSBootstrapIPSANs)
}

// sharedDoorAddress is the warning for a bootstrapped pods' door at a
// link-local address its certificate does not name; "" when there is none.
func (c config) sharedDoorAddress() string {
	if !c.TLSBootstrap {
		return ""
	}
	return door.SharedAddressWarning(c.SecureListenAddress, c.TLSBootstrapIPSANs)
}

// kubernetesServiceView is the local API's view pointing the node's
// default/kubernetes at the pods' door; nil when the rewrite is off.
func kubernetesServiceView(cfg config, log *slog.Logger) listwatch.View {
	if !cfg.rewritesKubernetesService() {
		return nil
	}
	door, err := cfg.podsDoor()
	if err != nil {
		return nil // validated: auto needs a specific address
	}
	rw, err := kubeservice.New(door, log)
	if err != nil {
		return nil
	}
	log.Info("the node's kubelet sees default/kubernetes at the pods' door", "address", door.String())
	return func(ctx context.Context, gvr schema.GroupVersionResource) listwatch.ObjectView {
		return rw.For(ctx, gvr)
	}
}
