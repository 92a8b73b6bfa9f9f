package door

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
)

// errNoBootstrapCertificate fails a handshake on the pods' door before its
// first certificate is signed (or after it expired).
var errNoBootstrapCertificate = errors.New("no serving certificate yet: the door's CertificateSigningRequest " +
	"(signer kubernetes.io/kubelet-serving) waits for approval and signing")

// BootstrapOptions ask the cloud for the pods' door's serving certificate
// with a CertificateSigningRequest, as the kubelet asks for its own serving
// certificate (--rotate-server-certificates).
type BootstrapOptions struct {
	// Cloud is the node's credentials: the CSR is the node's.
	Cloud *rest.Config
	// NodeName makes the subject system:node:<NodeName> (O=system:nodes)
	// and the certificate's DNS name.
	NodeName string
	// IPs are the certificate's IP SANs: the door's address and the
	// configured extra ones.
	IPs []net.IP
	// DataDir keeps the newest signed pair (0600, sealed with KeySealer).
	DataDir   string
	KeySealer KeySealer
	// Lifetime, when positive, is the CSR's spec.expirationSeconds (the
	// signer may shorten it; kube-controller-manager's minimum is 10 min).
	Lifetime time.Duration
	// PoolDoor makes it the pool door's certificate (docs/pool.md), kept
	// apart from the pods' door's in its own file.
	PoolDoor bool
	Logger   *slog.Logger
}

// BootstrapServing is the pods' door's serving certificate, requested,
// stored and rotated before expiry by client-go's certificate manager. It
// keeps serving the newest signed pair while the cloud is unreachable, and
// a rotated pair is used from the next handshake on: open connections and
// their watches keep theirs.
type BootstrapServing struct {
	mgr certificate.Manager // immutable
	log *slog.Logger        // immutable

	// served is the pair last served, to log a newly signed one once.
	// Guarded by mu.
	served *tls.Certificate

	mu sync.Mutex
	// base and derived cache the door's configuration for the last base
	// configuration seen. Guarded by mu.
	base, derived *tls.Config
}

// NewBootstrapServing loads the stored pair, if any, and prepares the
// manager; Start asks for a certificate when none is stored or when the
// stored one is due for rotation.
func NewBootstrapServing(o BootstrapOptions) (*BootstrapServing, error) {
	if o.NodeName == "" {
		return nil, errors.New("tls bootstrap needs the node name")
	}
	if len(o.IPs) == 0 {
		return nil, errors.New("tls bootstrap needs at least one IP address for the certificate")
	}
	cs, err := kubernetes.NewForConfig(o.Cloud)
	if err != nil {
		return nil, fmt.Errorf("tls bootstrap client: %w", err)
	}
	cfg := &certificate.Config{
		ClientsetFn: func(*tls.Certificate) (kubernetes.Interface, error) { return cs, nil },
		Template: &x509.CertificateRequest{
			Subject:     pkix.Name{CommonName: nodeUserPrefix + o.NodeName, Organization: []string{nodesGroup}},
			DNSNames:    []string{o.NodeName},
			IPAddresses: o.IPs,
		},
		SignerName:       certificatesv1.KubeletServingSignerName,
		GetUsages:        certificate.DefaultKubeletServingGetUsages,
		CertificateStore: newPairStore(o.DataDir, o.KeySealer, podsPair),
		Name:             "apiserver-lite-serving",
	}
	if o.PoolDoor {
		cfg.CertificateStore, cfg.Name = newPairStore(o.DataDir, o.KeySealer, poolPair), "apiserver-lite-pool-serving"
	}
	if o.Lifetime > 0 {
		cfg.RequestedCertificateLifetime = &o.Lifetime
	}
	mgr, err := certificate.NewManager(cfg)
	if err != nil {
		return nil, fmt.Errorf("tls bootstrap: %w", err)
	}
	if o.Logger != nil && mgr.Current() == nil {
		o.Logger.Warn("tls bootstrap: no signed serving certificate stored; the door refuses handshakes until "+
			"its CertificateSigningRequest is approved (kubectl get csr; kubectl certificate approve NAME)",
			"user", nodeUserPrefix+o.NodeName, "signer", certificatesv1.KubeletServingSignerName)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &BootstrapServing{mgr: mgr, log: log}, nil
}

// Start runs the rotation in the background; Stop ends it.
func (b *BootstrapServing) Start() { b.mgr.Start() }
func (b *BootstrapServing) Stop()  { b.mgr.Stop() }

// Current is the pair served now; nil before the first signing or after
// expiry.
func (b *BootstrapServing) Current() *tls.Certificate { return b.mgr.Current() }

// getCertificate serves the newest signed pair.
func (b *BootstrapServing) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c := b.mgr.Current()
	if c == nil {
		return nil, errNoBootstrapCertificate
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if c != b.served {
		b.served = c
		if c.Leaf != nil {
			b.log.Info("tls bootstrap: the pods' door serves a signed certificate", "serial", c.Leaf.SerialNumber.Text(16),
				"notAfter", c.Leaf.NotAfter, "ips", c.Leaf.IPAddresses, "dns", c.Leaf.DNSNames)
		}
	}
	return c, nil
}

// ServerTLS returns the pods' door's configuration: base's (the client CA,
// re-read when its file changes, and the protocols) with the bootstrapped
// certificate in place of base's serving certificate.
func (b *BootstrapServing) ServerTLS(base *tls.Config) *tls.Config {
	out := b.derive(base)
	if base.GetConfigForClient == nil {
		return out
	}
	out = out.Clone()
	out.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		cfg, err := base.GetConfigForClient(hello)
		if err != nil || cfg == nil {
			return cfg, err
		}
		return b.derive(cfg), nil
	}
	return out
}

// derive returns cfg with the bootstrapped certificate, cached for the
// last cfg seen, so a handshake does not clone a configuration.
func (b *BootstrapServing) derive(cfg *tls.Config) *tls.Config {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.base != cfg {
		d := cfg.Clone()
		d.Certificates, d.GetCertificate, d.GetConfigForClient = nil, b.getCertificate, nil
		b.base, b.derived = cfg, d
	}
	return b.derived
}
