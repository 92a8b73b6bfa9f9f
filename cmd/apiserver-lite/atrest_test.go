package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/tokencache"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
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

func TestStateSealingRefusesBadKeys(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short.key")
	if err := os.WriteFile(short, make([]byte, seal.KeySize-1), 0o600); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(data, "state.key")
	if err := os.WriteFile(inside, make([]byte, seal.KeySize), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, want string
	}{
		{"short", short, "exactly 32 bytes"},
		{"missing", filepath.Join(dir, "absent.key"), "no such file"},
		{"inside data dir", inside, "inside data-dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := stateSealing(config{EncryptionKeyFile: tc.file, DataDir: data})
			if err == nil || !strings.Contains(err.Error(), tc.file) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error naming %s and saying %q", err, tc.file, tc.want)
			}
		})
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

func TestSealedResource(t *testing.T) {
	for key, want := range map[string]bool{
		"/v1/secrets":                       true,
		"/v1/secrets?onDemand=true":         true,
		"/v1/secrets?namespace=kube-system": true,
		"/v1/secretsx":                      false,
		"/v1/configmaps":                    false,
		"example.com/v1/secrets":            false,
	} {
		if got := sealedResource(key); got != want {
			t.Errorf("sealedResource(%q): got %v, want %v", key, got, want)
		}
	}
}

// A pod's stored tokens are deleted with a scrub: no file keeps them.
func TestScrubbedAnswersDeletePodTokens(t *testing.T) {
	dir := t.TempDir()
	st, err := metastore.Open(context.Background(), filepath.Join(dir, dbFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	marker := []byte("plaintext-token-marker")
	answers := scrubbedAnswers{holding.MetaAnswers{Store: st}}
	if err := answers.Put(context.Background(), tokencache.PodPrefix("uid-1")+"k", marker); err != nil {
		t.Fatal(err)
	}
	if !dirHolds(t, dir, marker) {
		t.Fatal("the token is in no file before the delete; the test cannot see it")
	}
	if err := answers.DeleteMetaPrefix(context.Background(), tokencache.PodPrefix("uid-1")); err != nil {
		t.Fatal(err)
	}
	if dirHolds(t, dir, marker) {
		t.Error("a deleted pod's token is still in a file, want scrubbed")
	}
}

func dirHolds(t *testing.T, dir string, needle []byte) bool {
	t.Helper()
	for _, b := range dirBytes(t, dir) {
		if bytes.Contains(b, needle) {
			return true
		}
	}
	return false
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
