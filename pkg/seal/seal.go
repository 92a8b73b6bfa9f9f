package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// KeySize is the length of a state key in bytes: AES-256.
const KeySize = 32

// Magic starts every sealed value. The zero byte first keeps it apart from
// any JSON or protobuf ("k8s\x00") encoding of an object.
var Magic = []byte("\x00als-seal")

// version is the format byte after Magic: AES-256-GCM, 12-byte nonce.
const version byte = 1

// ErrOpen is returned by Open for a value that does not authenticate:
// sealed with another key, for another row, or damaged.
var ErrOpen = errors.New("sealed value does not authenticate")

// ErrKeySize is wrapped by New and ReadKeyFile for a key of the wrong size.
var ErrKeySize = fmt.Errorf("state key must be exactly %d bytes", KeySize)

// AEAD seals and opens values with one key. Safe for concurrent use.
type AEAD struct {
	// gcm is immutable after New.
	gcm cipher.AEAD
}

// New returns an AEAD for a KeySize-byte key.
func New(key []byte) (*AEAD, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w, got %d", ErrKeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("new cipher: %w", err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("new gcm: %w", err)
	}
	return &AEAD{gcm: gcm}, nil
}

// Seal encrypts plain with a fresh random nonce, binding ad (the row's
// key) to it.
func (a *AEAD) Seal(plain, ad []byte) ([]byte, error) {
	head := len(Magic) + 1
	out := make([]byte, head+a.gcm.NonceSize(), head+a.gcm.NonceSize()+len(plain)+a.gcm.Overhead())
	copy(out, Magic)
	out[len(Magic)] = version
	nonce := out[head:]
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("nonce: %w", err)
	}
	return a.gcm.Seal(out, nonce, plain, ad), nil
}

// Open decrypts a value Seal returned for the same ad. It fails with
// ErrOpen for any other key, ad or a damaged value.
func (a *AEAD) Open(sealed, ad []byte) ([]byte, error) {
	head := len(Magic) + 1
	if !IsSealed(sealed) || len(sealed) < head+a.gcm.NonceSize()+a.gcm.Overhead() || sealed[len(Magic)] != version {
		return nil, ErrOpen
	}
	nonce := sealed[head : head+a.gcm.NonceSize()]
	plain, err := a.gcm.Open(nil, nonce, sealed[head+a.gcm.NonceSize():], ad)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}

// IsSealed reports whether b starts like a sealed value.
func IsSealed(b []byte) bool { return bytes.HasPrefix(b, Magic) }
