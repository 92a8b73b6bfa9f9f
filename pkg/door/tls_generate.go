package door

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math"
	"math/big"
	"net"
	"slices"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	netutils "k8s.io/utils/net"
)

// The generated serving pair is certutil.GenerateSelfSignedCertKey's,
// with ECDSA P-256 keys in place of RSA-2048 ones: a handshake signs with
// the serving key, and a P-256 signature costs a fraction of an RSA-2048
// one at a strength above it. Names, validity and usages are certutil's.
const (
	// generatedValidity is how long the generated CA and serving
	// certificate are valid: a year, as certutil's; renewBefore replaces
	// them a month before it is up.
	generatedValidity = 365 * 24 * time.Hour
	// generatedBackdate starts their validity an hour before generation,
	// as certutil does, so a client whose clock is up to an hour behind
	// the node's accepts them.
	generatedBackdate = time.Hour
)

// generatedPEM is a generated serving pair: cert holds the serving
// certificate followed by its CA (as certutil's output does), ca the CA
// alone, key the serving key ("EC PRIVATE KEY").
type generatedPEM struct {
	cert, ca, key []byte
}

// generateServing makes a CA and a serving certificate it signs for host,
// ips and dns, valid from now less generatedBackdate.
//
// Invariant: both keys are ECDSA P-256, and the CA's key is dropped once
// the serving certificate is signed, so the CA vouches for that
// certificate alone; a new generation makes a new CA.
func generateServing(host string, ips []net.IP, dns []string, now time.Time) (generatedPEM, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return generatedPEM{}, fmt.Errorf("generate CA key: %w", err)
	}
	ca, err := newGeneratedCA(host, caKey, now)
	if err != nil {
		return generatedPEM{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return generatedPEM{}, fmt.Errorf("generate serving key: %w", err)
	}
	leaf, err := newGeneratedLeaf(servingTemplate(host, ips, dns, now), ca, caKey, key.Public())
	if err != nil {
		return generatedPEM{}, err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return generatedPEM{}, fmt.Errorf("encode serving key: %w", err)
	}
	caPEM := encodeCertPEM(ca.Raw)
	return generatedPEM{cert: slices.Concat(encodeCertPEM(leaf), caPEM), ca: caPEM, key: keyPEM}, nil
}

// newGeneratedCA self-signs the CA of a generated serving pair. As an
// ECDSA key encrypts no key, the CA's usages are certutil's without
// KeyEncipherment (certutil.NewSelfSignedCACert keeps it, and gives ten
// years).
func newGeneratedCA(host string, key *ecdsa.PrivateKey, now time.Time) (*x509.Certificate, error) {
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	from := now.Add(-generatedBackdate)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s-ca@%d", host, now.Unix())},
		NotBefore:             from,
		NotAfter:              from.Add(generatedValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("sign generated CA: %w", err)
	}
	return x509.ParseCertificate(der)
}

// servingTemplate is the generated serving certificate: host (as an IP
// when it parses as one, else as a DNS name; none when empty), then ips
// and dns, for server auth.
func servingTemplate(host string, ips []net.IP, dns []string, now time.Time) *x509.Certificate {
	from := now.Add(-generatedBackdate)
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s@%d", host, now.Unix())},
		NotBefore:             from,
		NotAfter:              from.Add(generatedValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	if ip := netutils.ParseIPSloppy(host); ip != nil {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	} else if host != "" {
		tmpl.DNSNames = append(tmpl.DNSNames, host)
	}
	tmpl.IPAddresses = append(tmpl.IPAddresses, ips...)
	tmpl.DNSNames = append(tmpl.DNSNames, dns...)
	return tmpl
}

// newGeneratedLeaf signs tmpl, with a random serial, for pub with the CA.
func newGeneratedLeaf(tmpl, ca *x509.Certificate, caKey crypto.Signer, pub crypto.PublicKey) ([]byte, error) {
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
	if err != nil {
		return nil, fmt.Errorf("sign generated serving certificate: %w", err)
	}
	return der, nil
}

// randomSerial is a uniform random serial number in [1, MaxInt64), as
// certutil draws them.
func randomSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64-1))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	return serial.Add(serial, big.NewInt(1)), nil
}

// encodeCertPEM encodes a DER certificate as PEM.
func encodeCertPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: der})
}
