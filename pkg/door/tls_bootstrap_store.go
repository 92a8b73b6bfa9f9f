package door

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/util/certificate"
)

// bootstrapPairFile holds the pods' door's cluster-signed certificate and
// its key in one file inside the data dir's tls folder, so a crash never
// leaves a certificate next to another certificate's key. It is 0600 and,
// with a state key, sealed as a whole.
const bootstrapPairFile = "bootstrap-serving.pem"

// bootstrapPairAD is the associated data of the sealed pair: a sealed value
// of another kind does not open as it.
var bootstrapPairAD = []byte("tls\x00bootstrap-serving-pair")

// A pairKind is which door a bootstrapped pair serves: its file and the
// associated data it is sealed with, so one door's pair never opens as
// the other's.
type pairKind struct {
	file string
	ad   []byte
}

var (
	// podsPair is the pods' door's pair.
	podsPair = pairKind{file: bootstrapPairFile, ad: bootstrapPairAD}
	// poolPair is the pool door's pair (docs/pool.md): its own CSR, for
	// the node's LAN address.
	poolPair = pairKind{file: "pool-serving.pem", ad: []byte("tls\x00pool-serving-pair")}
)

// bootstrapStore is the certificate manager's Store for the pods' door: the
// newest signed pair, kept in one file.
type bootstrapStore struct {
	path   string    // immutable
	ad     []byte    // immutable
	sealer KeySealer // immutable; nil keeps the file plaintext
}

var _ certificate.Store = (*bootstrapStore)(nil)

func newBootstrapStore(dataDir string, s KeySealer) *bootstrapStore {
	return newPairStore(dataDir, s, podsPair)
}

func newPairStore(dataDir string, s KeySealer, k pairKind) *bootstrapStore {
	return &bootstrapStore{path: filepath.Join(dataDir, servingDir, k.file), ad: k.ad, sealer: s}
}

// Current returns the stored pair, or certificate.NoCertKeyError when none
// is stored or the stored one does not load, so the manager requests a new
// one instead of failing the start.
func (s *bootstrapStore) Current() (*tls.Certificate, error) {
	raw, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, noCertKey("no bootstrapped serving certificate stored yet")
	}
	if err != nil {
		return nil, fmt.Errorf("read bootstrapped serving certificate: %w", err)
	}
	pemData, err := s.open(raw)
	if err != nil {
		return nil, noCertKey(err.Error())
	}
	pair, err := parsePair(pemData, pemData)
	if err != nil {
		return nil, noCertKey(err.Error())
	}
	if s.sealer != nil && isPEM(raw) {
		if err := s.write(pemData); err != nil { // sealed in place once a state key is set
			return nil, err
		}
	}
	return pair, nil
}

// Update stores a newly signed pair and returns it.
func (s *bootstrapStore) Update(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	pair, err := parsePair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	data := bytes.Join([][]byte{bytes.TrimSpace(certPEM), keyPEM}, []byte{'\n'})
	if err := s.write(data); err != nil {
		return nil, err
	}
	return pair, nil
}

func (s *bootstrapStore) write(pemData []byte) error {
	if err := os.MkdirAll(filepath.Dir(s.path), publicDirMode); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(s.path), err)
	}
	if s.sealer != nil {
		sealed, err := s.sealer.Seal(pemData, s.ad)
		if err != nil {
			return fmt.Errorf("seal bootstrapped serving certificate: %w", err)
		}
		pemData = sealed
	}
	return writePrivate(s.path, pemData)
}

func (s *bootstrapStore) open(raw []byte) ([]byte, error) {
	if s.sealer == nil || isPEM(raw) {
		return raw, nil
	}
	out, err := s.sealer.Open(raw, s.ad)
	if err != nil {
		return nil, fmt.Errorf("open bootstrapped serving certificate: %w", err)
	}
	return out, nil
}

// parsePair loads a pair and sets its Leaf, which the manager reads for
// the expiry.
func parsePair(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load bootstrapped serving certificate: %w", err)
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("parse bootstrapped serving certificate: %w", err)
		}
	}
	return &pair, nil
}

func noCertKey(msg string) error {
	e := certificate.NoCertKeyError(msg)
	return &e
}

// ResealBootstrapPair moves the bootstrapped serving pairs under dataDir
// (the pods' door's and the pool door's) from the state key from (nil:
// plaintext) to the state key to, for a key rotation. A pair not stored
// is skipped.
func ResealBootstrapPair(dataDir string, from, to KeySealer) error {
	for _, k := range []pairKind{podsPair, poolPair} {
		if err := resealPair(dataDir, from, to, k); err != nil {
			return err
		}
	}
	return nil
}

func resealPair(dataDir string, from, to KeySealer, k pairKind) error {
	src := newPairStore(dataDir, from, k)
	raw, err := os.ReadFile(src.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read bootstrapped serving certificate: %w", err)
	}
	pemData, err := src.open(raw)
	if err != nil {
		return err
	}
	return newPairStore(dataDir, to, k).write(pemData)
}
