package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/atrest"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

func openWithKey(t *testing.T, data, key string) (*metastore.Store, error) {
	t.Helper()
	sealing, err := atrest.StateSealing(key, data)
	if err != nil {
		t.Fatal(err)
	}
	return metastore.OpenWith(context.Background(), filepath.Join(data, dbFile), metastore.Options{Sealing: sealing})
}

func TestRekey(t *testing.T) {
	data, oldKey, newKey := filepath.Join(t.TempDir(), "data"), mustKeyFile(t), mustKeyFile(t)
	mustSeedCredentials(t, data, oldKey)
	cert := mustGeneratedCert(t, data, oldKey)
	out, err := runCommand(t, "rekey", "--data-dir", data, "--encryption-key-file", oldKey, newKey)
	if err != nil || !strings.Contains(out, "re-encrypted") {
		t.Fatalf("rekey: got %v %q", err, out)
	}
	if got := mustGeneratedCert(t, data, newKey); !bytes.Equal(got, cert) {
		t.Error("the TLS door's certificate changed with the rekey, want its generated key carried over")
	}
	if _, err := openWithKey(t, data, oldKey); !errors.Is(err, metastore.ErrWrongKey) {
		t.Fatalf("old key after rekey: got %v, want ErrWrongKey", err)
	}
	st, err := openWithKey(t, data, newKey)
	if err != nil {
		t.Fatalf("new key: %v", err)
	}
	defer st.Close()
	if v, err := st.GetMeta(context.Background(), "tokenrequest/pod-uid/abc"); err != nil || string(v) != "token-answer-marker" {
		t.Fatalf("got %q, %v, want the token readable with the new key", v, err)
	}
	objs, _, err := st.Load(context.Background(), "/v1/secrets")
	if err != nil || len(objs) != 1 || !strings.Contains(string(objs[0].Raw), "c2VjcmV0LW1hcmtlcg") {
		t.Fatalf("got %d secrets, %v, want the secret readable with the new key", len(objs), err)
	}
}

func TestRekeyRefusesARunningDaemon(t *testing.T) {
	data, oldKey, newKey := filepath.Join(t.TempDir(), "data"), mustKeyFile(t), mustKeyFile(t)
	mustSeedCredentials(t, data, oldKey)
	if err := os.WriteFile(filepath.Join(data, dbFile+"-wal"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runCommand(t, "rekey", "--data-dir", data, "--encryption-key-file", oldKey, newKey); err == nil ||
		!strings.Contains(err.Error(), "stop it") {
		t.Fatalf("got %v, want refused while the daemon may run", err)
	}
}

// mustGeneratedCert loads (generating once) the TLS door's certificate in
// data with the state key in keyFile, and returns its DER.
func mustGeneratedCert(t *testing.T, data, keyFile string) []byte {
	t.Helper()
	sealing, err := atrest.StateSealing(keyFile, data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := door.ServerTLS(door.TLSOptions{DataDir: data, Host: "n1", KeySealer: sealing.Sealer}, time.Now())
	if err != nil {
		t.Fatalf("tls door: %v", err)
	}
	return cfg.Certificates[0].Certificate[0]
}
