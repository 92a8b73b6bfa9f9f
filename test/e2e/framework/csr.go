//go:build e2e

package framework

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// csrPollInterval is how often the test signer looks for new CSRs.
const csrPollInterval = 300 * time.Millisecond

// ClusterCA is the cluster CA's certificate: the kube-root-ca.crt every
// pod trusts.
func (c *Cluster) ClusterCA() []byte { return c.pki.CAPEM }

// ServingSigner approves and signs the node's kubelet-serving
// CertificateSigningRequests with the cluster CA, as kube-controller-
// manager's csrsigning controller would after an approval: no controller
// manager runs in this cloud. Certificates are valid for Lifetime from
// their signing (not backdated, so the requester's rotation at 70-90% of
// the lifetime comes quickly), ignoring spec.expirationSeconds as a
// signer may.
type ServingSigner struct {
	c        *Cluster
	lifetime time.Duration

	mu sync.Mutex
	// signed lists the CSRs signed, oldest first. Guarded by mu.
	signed []*certificatesv1.CertificateSigningRequest
	// paused makes the signer leave new CSRs pending. Guarded by mu.
	paused bool
	// also are more nodes whose CSRs are signed (AlsoFor). Guarded by mu.
	also []string
}

// AlsoFor signs the CSRs of nodes too (a fleet's, a pool's), besides the
// cluster's node.
func (s *ServingSigner) AlsoFor(nodes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.also = append(s.also, nodes...)
}

// signsFor reports whether user's CSRs are signed.
func (s *ServingSigner) signsFor(user string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if user == fmt.Sprintf(nodeUserFmt, s.c.NodeName) {
		return true
	}
	for _, n := range s.also {
		if user == fmt.Sprintf(nodeUserFmt, n) {
			return true
		}
	}
	return false
}

// StartServingSigner runs a ServingSigner until the test ends.
func (c *Cluster) StartServingSigner(lifetime time.Duration) *ServingSigner {
	s := &ServingSigner{c: c, lifetime: lifetime}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := s.signPending(ctx); err != nil && ctx.Err() == nil {
				c.t.Logf("serving signer: %v", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(csrPollInterval):
			}
		}
	}()
	return s
}

// Signed returns the CSRs signed so far, oldest first.
func (s *ServingSigner) Signed() []*certificatesv1.CertificateSigningRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.signed)
}

// Pause leaves new CSRs pending until Resume.
func (s *ServingSigner) Pause()  { s.setPaused(true) }
func (s *ServingSigner) Resume() { s.setPaused(false) }

func (s *ServingSigner) setPaused(p bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = p
}

func (s *ServingSigner) signPending(ctx context.Context) error {
	s.mu.Lock()
	paused := s.paused
	s.mu.Unlock()
	if paused {
		return nil
	}
	api := s.c.Admin.CertificatesV1().CertificateSigningRequests()
	list, err := api.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		csr := &list.Items[i]
		if csr.Spec.SignerName != certificatesv1.KubeletServingSignerName || len(csr.Status.Certificate) > 0 ||
			!s.signsFor(csr.Spec.Username) {
			continue
		}
		if err := s.sign(ctx, csr); err != nil {
			return fmt.Errorf("csr %s: %w", csr.Name, err)
		}
	}
	return nil
}

// sign checks the request as the kubelet-serving signer does, approves it
// (as kubectl certificate approve) and writes the certificate.
func (s *ServingSigner) sign(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	req, err := parseCSR(csr.Spec.Request)
	if err != nil {
		return err
	}
	if req.Subject.CommonName != csr.Spec.Username || !slices.Equal(req.Subject.Organization, []string{nodeGroup}) ||
		len(req.EmailAddresses) > 0 || len(req.URIs) > 0 || len(req.DNSNames)+len(req.IPAddresses) == 0 {
		return errors.New("not a kubelet-serving request")
	}
	api := s.c.Admin.CertificatesV1().CertificateSigningRequests()
	if !approved(csr) {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
			Reason: "E2EApprove", Message: "approved by the e2e test"})
		if csr, err = api.UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("approve: %w", err)
		}
	}
	der, err := s.issue(req)
	if err != nil {
		return err
	}
	csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	out, err := api.UpdateStatus(ctx, csr, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	s.mu.Lock()
	s.signed = append(s.signed, out)
	s.mu.Unlock()
	return nil
}

func (s *ServingSigner) issue(req *x509.CertificateRequest) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), serialBits))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	usage := x509.KeyUsageDigitalSignature
	if _, ok := req.PublicKey.(*rsa.PublicKey); ok {
		usage |= x509.KeyUsageKeyEncipherment
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: req.Subject, NotBefore: now, NotAfter: now.Add(s.lifetime),
		DNSNames: req.DNSNames, IPAddresses: req.IPAddresses, KeyUsage: usage,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true}
	ca := s.c.pki.ca
	return x509.CreateCertificate(rand.Reader, tmpl, ca.cert, req.PublicKey, ca.key)
}

func parseCSR(b []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("no PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, err
	}
	return req, req.CheckSignature()
}

func approved(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
