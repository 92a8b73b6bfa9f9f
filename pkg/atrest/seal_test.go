package atrest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
	"github.com/apiserver-lite/apiserver-lite/pkg/seal"
)

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
			_, err := StateSealing(tc.file, data)
			if err == nil || !strings.Contains(err.Error(), tc.file) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error naming %s and saying %q", err, tc.file, tc.want)
			}
		})
	}
}

func TestSealedResource(t *testing.T) {
	for key, want := range map[string]bool{
		"/v1/secrets":                            true,
		"/v1/secrets?onDemand=true":              true,
		"/v1/secrets?namespace=kube-system":      true,
		"/v1/secrets?forPods=true&namespace=app": true, // a namespaced holding
		"/v1/secretsx":                           false,
		"/v1/configmaps":                         false,
		"example.com/v1/secrets":                 false,
	} {
		if got := sealedResource(key); got != want {
			t.Errorf("sealedResource(%q): got %v, want %v", key, got, want)
		}
	}
}

// A pod's stored tokens are deleted with a scrub: no file keeps them.
func TestScrubbedAnswersDeletePodTokens(t *testing.T) {
	dir := t.TempDir()
	st, err := metastore.Open(context.Background(), filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	marker := []byte("plaintext-token-marker")
	answers := ScrubbedAnswers{offline.MetaStore{Store: st}}
	if err := answers.Put(context.Background(), offline.PodPrefix("uid-1")+"k", marker); err != nil {
		t.Fatal(err)
	}
	if !dirHolds(t, dir, marker) {
		t.Fatal("the token is in no file before the delete; the test cannot see it")
	}
	if err := answers.DeleteMetaPrefix(context.Background(), offline.PodPrefix("uid-1")); err != nil {
		t.Fatal(err)
	}
	if dirHolds(t, dir, marker) {
		t.Error("a deleted pod's token is still in a file, want scrubbed")
	}
}

// dirHolds reports whether a file directly under dir contains needle.
func dirHolds(t *testing.T, dir string, needle []byte) bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err == nil && bytes.Contains(b, needle) {
			return true
		}
	}
	return false
}
