package seal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newAEAD(t *testing.T) *AEAD {
	t.Helper()
	key, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRoundTrip(t *testing.T) {
	a := newAEAD(t)
	for _, plain := range [][]byte{nil, []byte("{}"), bytes.Repeat([]byte("secret"), 1000)} {
		sealed, err := a.Seal(plain, []byte("objects/v1/secrets/ns/a"))
		if err != nil {
			t.Fatal(err)
		}
		if !IsSealed(sealed) {
			t.Fatalf("IsSealed(sealed) = false")
		}
		if len(plain) > 0 && bytes.Contains(sealed, plain) {
			t.Fatalf("sealed value holds the plaintext")
		}
		got, err := a.Open(sealed, []byte("objects/v1/secrets/ns/a"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, plain) {
			t.Fatalf("got %q, want %q", got, plain)
		}
	}
}

func TestNoncesDiffer(t *testing.T) {
	a := newAEAD(t)
	x, _ := a.Seal([]byte("same"), []byte("k"))
	y, _ := a.Seal([]byte("same"), []byte("k"))
	if bytes.Equal(x, y) {
		t.Fatal("two seals of the same value are equal: nonce reused")
	}
}

func TestOpenRefuses(t *testing.T) {
	a, other := newAEAD(t), newAEAD(t)
	sealed, err := a.Seal([]byte("token"), []byte("row-a"))
	if err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Clone(sealed)
	damaged[len(damaged)-1] ^= 1
	for name, tc := range map[string]struct {
		a      *AEAD
		sealed []byte
		ad     string
	}{
		"moved to another row": {a, sealed, "row-b"},
		"another key":          {other, sealed, "row-a"},
		"damaged":              {a, damaged, "row-a"},
		"truncated":            {a, sealed[:len(Magic)+3], "row-a"},
		"plaintext":            {a, []byte(`{"kind":"Secret"}`), "row-a"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := tc.a.Open(tc.sealed, []byte(tc.ad)); !errors.Is(err, ErrOpen) {
				t.Fatalf("got %v, want ErrOpen", err)
			}
		})
	}
}

func TestNewRefusesKeySize(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33} {
		if _, err := New(make([]byte, n)); !errors.Is(err, ErrKeySize) {
			t.Errorf("New(%d bytes): got %v, want ErrKeySize", n, err)
		}
	}
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "key")
	key, _ := Generate()
	if err := WriteKeyFile(good, key); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(good); fi.Mode().Perm() != 0o600 {
		t.Fatalf("got mode %v, want 0600", fi.Mode().Perm())
	}
	if err := WriteKeyFile(good, key); err == nil {
		t.Fatal("WriteKeyFile replaced an existing file")
	}
	got, err := ReadKeyFile(good)
	if err != nil || !bytes.Equal(got, key) {
		t.Fatalf("got %x, %v, want the written key", got, err)
	}
	for name, content := range map[string][]byte{"short": key[:31], "long": append(bytes.Clone(key), '\n'), "empty": nil} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, content, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := ReadKeyFile(p)
			if !errors.Is(err, ErrKeySize) || !strings.Contains(err.Error(), p) {
				t.Fatalf("got %v, want ErrKeySize naming %s", err, p)
			}
		})
	}
	if _, err := ReadKeyFile(filepath.Join(dir, "absent")); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Fatalf("got %v, want an error naming the file", err)
	}
}

func FuzzOpen(f *testing.F) {
	key := make([]byte, KeySize)
	a, err := New(key)
	if err != nil {
		f.Fatal(err)
	}
	good, _ := a.Seal([]byte("v"), []byte("ad"))
	f.Add(good, []byte("ad"))
	f.Add([]byte("{}"), []byte(""))
	f.Fuzz(func(t *testing.T, sealed, ad []byte) {
		plain, err := a.Open(sealed, ad)
		if err == nil {
			again, _ := a.Seal(plain, ad)
			if back, err := a.Open(again, ad); err != nil || !bytes.Equal(back, plain) {
				t.Fatalf("round trip of an opened value failed: %v", err)
			}
		}
	})
}
