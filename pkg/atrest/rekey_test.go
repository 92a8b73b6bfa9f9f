package atrest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/seal"
)

// keyFile writes a new state key outside the data dir.
func keyFile(t *testing.T) string {
	t.Helper()
	key, err := seal.Generate()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "state.key")
	if err := seal.WriteKeyFile(path, key); err != nil {
		t.Fatal(err)
	}
	return path
}

// openSealed opens db in data sealed with keyFile's key.
func openSealed(t *testing.T, db, data, keyFile string) (*metastore.Store, error) {
	t.Helper()
	sealing, err := StateSealing(keyFile, data)
	if err != nil {
		t.Fatal(err)
	}
	return metastore.OpenWith(context.Background(), db, metastore.Options{Sealing: sealing})
}

// A rekeyed store opens with the new key only; a store whose WAL exists
// (a running daemon's) is refused untouched.
func TestRekey(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, oldKey, newKey := filepath.Join(data, "state.db"), keyFile(t), keyFile(t)
	st, err := openSealed(t, db, data, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutMeta(ctx, "tokenrequest/pod-uid/abc", []byte("answer")); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db+"-wal", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Rekey(ctx, db, data, oldKey, newKey); !errors.Is(err, ErrStoreInUse) {
		t.Fatalf("with a WAL: got %v, want ErrStoreInUse", err)
	}
	if err := os.Remove(db + "-wal"); err != nil {
		t.Fatal(err)
	}
	if _, next, err := Rekey(ctx, db, data, oldKey, newKey); err != nil || next.Sealer == nil {
		t.Fatalf("rekey: got %v, sealer %v; want the new sealing", err, next.Sealer)
	}
	if _, err := openSealed(t, db, data, oldKey); !errors.Is(err, metastore.ErrWrongKey) {
		t.Fatalf("old key after rekey: got %v, want ErrWrongKey", err)
	}
	st, err = openSealed(t, db, data, newKey)
	if err != nil {
		t.Fatalf("new key: %v", err)
	}
	defer st.Close()
	if v, err := st.GetMeta(ctx, "tokenrequest/pod-uid/abc"); err != nil || string(v) != "answer" {
		t.Errorf("got %q, %v; want the answer readable with the new key", v, err)
	}
}
