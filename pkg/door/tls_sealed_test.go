package door

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/seal"
)

func newKeySealer(t *testing.T) KeySealer {
	t.Helper()
	key, err := seal.Generate()
	if err != nil {
		t.Fatal(err)
	}
	a, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// With a state key the generated serving key is sealed on disk, and is
// kept (not regenerated) across restarts; a plaintext key generated
// before the state key was set is sealed in place, keeping its CA.
func TestServerTLSSealsGeneratedKey(t *testing.T) {
	for _, tc := range []struct {
		name       string
		plainFirst bool
	}{
		{"generated with a key", false},
		{"generated before the key was set", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, sealer, now := t.TempDir(), newKeySealer(t), time.Now()
			o := TLSOptions{DataDir: dir, Host: "n1", DNS: []string{"localhost"}, KeySealer: sealer}
			if tc.plainFirst {
				plain := o
				plain.KeySealer = nil
				if _, _, err := ServerTLS(plain, now); err != nil {
					t.Fatal(err)
				}
			}
			caFile := filepath.Join(dir, servingDir, servingCAFile)
			ca0, _ := os.ReadFile(caFile)
			cfg, _, err := ServerTLS(o, now)
			if err != nil {
				t.Fatal(err)
			}
			keyFile := filepath.Join(dir, servingDir, servingKeyFile)
			raw, err := os.ReadFile(keyFile)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(raw, []byte("PRIVATE KEY")) || !seal.IsSealed(raw) {
				t.Fatalf("key file holds %.40q, want a sealed value", raw)
			}
			if ca1, _ := os.ReadFile(caFile); tc.plainFirst && !bytes.Equal(ca0, ca1) {
				t.Fatal("sealing the existing key replaced the CA, want it kept")
			}
			again, _, err := ServerTLS(o, now)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again.Certificates[0].Certificate[0], cfg.Certificates[0].Certificate[0]) {
				t.Fatal("got a new certificate on restart, want the sealed one kept")
			}
		})
	}
}
