package kubeconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocalServer(t *testing.T) {
	for _, tc := range []struct {
		name, listen, want, wantErr string
	}{
		{"loopback", "127.0.0.1:10550", "https://127.0.0.1:10550", ""},
		{"unspecified", "0.0.0.0:10550", "https://127.0.0.1:10550", ""},
		{"no host", ":10550", "https://127.0.0.1:10550", ""},
		{"ipv6", "[::1]:10550", "https://[::1]:10550", ""},
		{"off", "", "", "the local door is off"},
		{"no port", "127.0.0.1", "", "missing port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := localServer(tc.listen)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v, want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v, want %q", got, err, tc.want)
			}
		})
	}
}

// The generated CA is required when tls-cert-file is unset, and refused as
// a default when it is set.
func TestServingCA(t *testing.T) {
	dir := t.TempDir()
	if _, err := (Options{DataDir: dir}).servingCA(); err == nil || !strings.Contains(err.Error(), "the daemon generates it") {
		t.Errorf("no generated CA: got %v, want a pointer to the daemon", err)
	}
	if _, err := (Options{DataDir: dir, TLSCertFile: "/etc/tls.crt"}).servingCA(); err == nil || !strings.Contains(err.Error(), "--certificate-authority") {
		t.Errorf("tls-cert-file set: got %v, want a pointer to --certificate-authority", err)
	}
	bad := filepath.Join(dir, "bad.crt")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (Options{CA: bad}).servingCA(); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("not a certificate: got %v, want an error naming %s", err, bad)
	}
}

func TestWritePrivateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "admin.conf")
	if err := os.WriteFile(path, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WritePrivateFile(path, []byte("fresh")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != FileMode {
		t.Fatalf("got %v, %v, want mode %o", st, err, FileMode)
	}
	if b, _ := os.ReadFile(path); string(b) != "fresh" {
		t.Errorf("got %q, want %q", b, "fresh")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".admin.conf.*")); len(left) != 0 {
		t.Errorf("got temporary files %v left, want none", left)
	}
}
