package seal

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
)

// keyFileMode keeps a written key file readable by its owner only.
const keyFileMode os.FileMode = 0o600

// ReadKeyFile reads a state key: a file of exactly KeySize raw bytes.
// Every error names the file.
func ReadKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("encryption key file %s: %w", path, err)
	}
	defer f.Close()
	// One byte more than a key tells a longer file from a key.
	key, err := io.ReadAll(io.LimitReader(f, KeySize+1))
	if err != nil {
		return nil, fmt.Errorf("encryption key file %s: %w", path, err)
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("encryption key file %s: %w (write one with `apiserver-lite keygen` or `head -c %d /dev/urandom`)",
			path, ErrKeySize, KeySize)
	}
	return key, nil
}

// Generate returns a new random key.
func Generate() ([]byte, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	return key, nil
}

// WriteKeyFile writes key to a new file at path with mode 0600; it never
// replaces an existing file.
func WriteKeyFile(path string, key []byte) error {
	if len(key) != KeySize {
		return fmt.Errorf("write key %s: %w", path, ErrKeySize)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, keyFileMode)
	if err != nil {
		return fmt.Errorf("write key %s: %w", path, err)
	}
	_, err = f.Write(key)
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("write key %s: %w", path, err)
	}
	return nil
}
