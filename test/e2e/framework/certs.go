//go:build e2e

package framework

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// certLifetime is how long generated certificates are valid; one day
// outlives any test run.
const certLifetime = 24 * time.Hour

// clockSkew backdates NotBefore so a certificate is valid immediately.
const clockSkew = time.Hour

// serviceAccountKeyBits is the RSA key size for service account tokens.
const serviceAccountKeyBits = 2048

// serialBits is the size of random certificate serial numbers.
const serialBits = 128

// authority is a throwaway certificate authority for one test cluster.
type authority struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
}

// keyPair is a PEM encoded certificate and its private key.
type keyPair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// newAuthority creates a self-signed CA.
func newAuthority(commonName string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate ca key: %w", err)
	}
	tmpl, err := certTemplate(pkix.Name{CommonName: commonName})
	if err != nil {
		return nil, err
	}
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("sign ca: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse ca: %w", err)
	}
	return &authority{cert: cert, key: key, certPEM: encodePEM("CERTIFICATE", der)}, nil
}

// issueServing signs a serving certificate for the given IPs and DNS names.
func (a *authority) issueServing(commonName string, ips []net.IP, dnsNames []string) (keyPair, error) {
	tmpl, err := certTemplate(pkix.Name{CommonName: commonName})
	if err != nil {
		return keyPair{}, err
	}
	tmpl.IPAddresses, tmpl.DNSNames = ips, dnsNames
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	return a.issue(tmpl)
}

// issueClient signs a client certificate; Kubernetes reads the user name
// from CN and the groups from O.
func (a *authority) issueClient(user string, groups ...string) (keyPair, error) {
	tmpl, err := certTemplate(pkix.Name{CommonName: user, Organization: groups})
	if err != nil {
		return keyPair{}, err
	}
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return a.issue(tmpl)
}

// issue generates a key and signs tmpl with the CA.
func (a *authority) issue(tmpl *x509.Certificate) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, fmt.Errorf("generate key for %s: %w", tmpl.Subject.CommonName, err)
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		return keyPair{}, fmt.Errorf("sign %s: %w", tmpl.Subject.CommonName, err)
	}
	keyPEM, err := encodePrivateKey(key)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{CertPEM: encodePEM("CERTIFICATE", der), KeyPEM: keyPEM}, nil
}

// newServiceAccountKey returns the PEM private and public halves of the key
// kube-apiserver signs and verifies service account tokens with.
func newServiceAccountKey() (privPEM, pubPEM []byte, err error) {
	key, err := rsa.GenerateKey(rand.Reader, serviceAccountKeyBits)
	if err != nil {
		return nil, nil, fmt.Errorf("generate service account key: %w", err)
	}
	privPEM, err = encodePrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, nil, fmt.Errorf("marshal service account public key: %w", err)
	}
	return privPEM, encodePEM("PUBLIC KEY", pubDER), nil
}

// certTemplate returns a template with a random serial and test lifetime.
func certTemplate(subject pkix.Name) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), serialBits))
	if err != nil {
		return nil, fmt.Errorf("generate serial: %w", err)
	}
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     now.Add(certLifetime),
	}, nil
}

func encodePrivateKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal private key: %w", err)
	}
	return encodePEM("PRIVATE KEY", der), nil
}

func encodePEM(blockType string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
}
