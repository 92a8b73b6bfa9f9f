package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/seal"
)

// mustKeyFile writes a new state key outside any data dir.
func mustKeyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.key")
	var out bytes.Buffer
	if err := cmdKeygen(context.Background(), []string{path, "--data-dir", "/nonexistent"}, &out); err != nil {
		t.Fatalf("keygen: %v", err)
	}
	return path
}

// dirBytes reads every file directly under dir.
func dirBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// A daemon started with another key, or with none, on a sealed store
// fails at once with an error naming the key file, and leaves the data
// as it was.
func TestRunRefusesAnotherKey(t *testing.T) {
	key := mustKeyFile(t)
	d := startOfflineDaemon(t, "--encryption-key-file", key)
	if _, body := get(t, d.base+"/readyz?verbose"); strings.Contains(body, "encryption-key") {
		t.Errorf("/readyz?verbose with a key: got %q, want no encryption-key note", body)
	}
	if err := d.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	root := filepath.Dir(d.data)
	before := dirBytes(t, d.data)
	other := mustKeyFile(t)
	base := []string{"--config", filepath.Join(root, "config.yaml"), "--kubeconfig", filepath.Join(root, "kubeconfig"),
		"--data-dir", d.data, "--listen-address", mustFreeAddress(t), "--node-name", "n1", "--log-level", "error"}
	for _, tc := range []struct {
		name  string
		extra []string
		want  []string
	}{
		{"another key", []string{"--encryption-key-file", other}, []string{other, "does not open"}},
		{"no key", nil, []string{d.data, "encryption-key-file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), append(append([]string{}, base...), tc.extra...))
			if err == nil {
				t.Fatal("run: got nil, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("run: got %q, want it to name %q", err, w)
				}
			}
			after := dirBytes(t, d.data)
			if len(after) != len(before) {
				t.Fatalf("got %d files, want %d: the data dir changed", len(after), len(before))
			}
			for f, b := range before {
				if !bytes.Equal(after[f], b) {
					t.Errorf("%s changed: the data was touched", f)
				}
			}
		})
	}
}

func TestRunWithoutKeySaysSo(t *testing.T) {
	d := startOfflineDaemon(t)
	_, body := get(t, d.base+"/readyz?verbose")
	if !strings.Contains(body, "encryption-key: no encryption-key-file") {
		t.Errorf("/readyz?verbose without a key: got %q, want the encryption-key note", body)
	}
}

func TestKeygen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "k")
	var out bytes.Buffer
	if err := cmdKeygen(context.Background(), []string{file, "--data-dir", filepath.Join(dir, "data")}, &out); err != nil {
		t.Fatalf("keygen: %v", err)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != seal.KeySize {
		t.Fatalf("got %v, %v, want a 0600 file of %d bytes", fi, err, seal.KeySize)
	}
	if !strings.Contains(out.String(), "systemd-creds encrypt --name="+keyCredential) {
		t.Errorf("got %q, want the systemd-creds line", out.String())
	}
	if err := cmdKeygen(context.Background(), []string{file, "--data-dir", filepath.Join(dir, "data")}, &out); err == nil {
		t.Error("keygen over an existing key: got nil, want an error")
	}
	if err := cmdKeygen(context.Background(), []string{filepath.Join(dir, "data", "k"), "--data-dir", filepath.Join(dir, "data")}, &out); err == nil ||
		!strings.Contains(err.Error(), "inside data-dir") {
		t.Errorf("keygen inside the data dir: got %v, want refused", err)
	}
	var raw bytes.Buffer
	if err := cmdKeygen(context.Background(), []string{"-"}, &raw); err != nil || raw.Len() != seal.KeySize {
		t.Errorf("keygen -: got %d bytes, %v, want %d raw bytes", raw.Len(), err, seal.KeySize)
	}
}

func TestKeygenRefusesATerminal(t *testing.T) {
	tty, err := os.OpenFile("/dev/null", os.O_WRONLY, 0) // a character device, as a terminal is
	if err != nil {
		t.Skip("no /dev/null")
	}
	defer tty.Close()
	if err := cmdKeygen(context.Background(), []string{"-"}, tty); err == nil || !strings.Contains(err.Error(), "terminal") {
		t.Fatalf("got %v, want refused", err)
	}
}
