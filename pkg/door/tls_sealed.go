package door

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// KeySealer encrypts the generated serving key at rest with the state key
// (package seal's AEAD); Open fails for a value sealed with another key or
// for another use.
type KeySealer interface {
	Seal(plain, ad []byte) ([]byte, error)
	Open(sealed, ad []byte) ([]byte, error)
}

// generatedKeyAD is the associated data of the sealed generated key: a
// sealed value of another kind does not open as it.
var generatedKeyAD = []byte("tls\x00generated-serving-key")

// pemStart begins every PEM file, and no sealed value.
var pemStart = []byte("-----BEGIN")

// isPEM reports whether b is a plaintext PEM file.
func isPEM(b []byte) bool { return bytes.HasPrefix(bytes.TrimSpace(b), pemStart) }

// openGeneratedKey returns the PEM of a generated key file's contents:
// opened with s when sealed, unchanged when plaintext or without s.
func openGeneratedKey(b []byte, s KeySealer) ([]byte, error) {
	if s == nil || isPEM(b) {
		return b, nil
	}
	pem, err := s.Open(b, generatedKeyAD)
	if err != nil {
		return nil, fmt.Errorf("open serving key: %w", err)
	}
	return pem, nil
}

// writeGeneratedKey writes a generated key's PEM to path (0600, through a
// rename), sealed with s unless s is nil.
func writeGeneratedKey(path string, pem []byte, s KeySealer) error {
	if s != nil {
		sealed, err := s.Seal(pem, generatedKeyAD)
		if err != nil {
			return fmt.Errorf("seal serving key: %w", err)
		}
		pem = sealed
	}
	return writePrivate(path, pem)
}

// loadGeneratedPair loads the generated pair; a plaintext key written
// before the state key was set is sealed in place.
func loadGeneratedPair(certFile, keyFile string, s KeySealer) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	raw, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := openGeneratedKey(raw, s)
	if err != nil {
		return tls.Certificate{}, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, err
	}
	if s != nil && isPEM(raw) {
		if err := writeGeneratedKey(keyFile, keyPEM, s); err != nil {
			return tls.Certificate{}, err
		}
	}
	return pair, nil
}

// ResealGeneratedKey moves the generated serving key under dataDir from
// the state key from (nil: plaintext) to the state key to, for a key
// rotation. Without a generated key it does nothing.
func ResealGeneratedKey(dataDir string, from, to KeySealer) error {
	keyFile := filepath.Join(dataDir, servingDir, servingKeyFile)
	raw, err := os.ReadFile(keyFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read serving key: %w", err)
	}
	pem, err := openGeneratedKey(raw, from)
	if err != nil {
		return err
	}
	return writeGeneratedKey(keyFile, pem, to)
}
