package snapshot

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
)

const testDB = "state.db"

// mustSnapshot saves a store of node n1 holding a TokenRequest answer and
// returns the snapshot's path.
func mustSnapshot(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := metastore.Open(ctx, filepath.Join(dir, testDB))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutMeta(ctx, metastore.NodeNameKey, []byte("n1")); err != nil {
		t.Fatal(err)
	}
	if err := st.PutMeta(ctx, offline.TokenRequestPrefix+"uid/k", []byte("token")); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "snap.db")
	var out bytes.Buffer
	if err := Save(ctx, filepath.Join(dir, testDB), file, &out); err != nil {
		t.Fatalf("save: %v", err)
	}
	if want := `node "n1", 0 resources, integrity ok, Secrets in plaintext, no credentials`; !strings.Contains(out.String(), want) {
		t.Errorf("save: got %q, want %q", out.String(), want)
	}
	return file
}

func TestRestore(t *testing.T) {
	ctx := context.Background()
	file := mustSnapshot(t)
	data := filepath.Join(t.TempDir(), "data")
	opts := RestoreOptions{File: file, DataDir: data, DBFile: testDB, DirMode: 0o700, Node: "n1"}
	for _, tc := range []struct {
		name    string
		edit    func(*RestoreOptions)
		wantErr string
	}{
		{"another node", func(o *RestoreOptions) { o.Node = "n2" }, `taken on node "n1"`},
		{"first", func(*RestoreOptions) {}, ""},
		{"existing store", func(*RestoreOptions) {}, "pass --force"},
		{"forced", func(o *RestoreOptions) { o.Force = true }, ""},
		{"sealed key missing", func(o *RestoreOptions) { o.Force, o.KeyFile = true, filepath.Join(t.TempDir(), "absent.key") }, "absent.key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts
			tc.edit(&o)
			err := Restore(ctx, o, &bytes.Buffer{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want restored", err)
			}
		})
	}
	st, err := metastore.Open(ctx, filepath.Join(data, testDB))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got, err := st.GetMeta(ctx, metastore.NodeNameKey); err != nil || string(got) != "n1" {
		t.Errorf("node name: got %q, %v, want n1", got, err)
	}
	if _, err := st.GetMeta(ctx, offline.TokenRequestPrefix+"uid/k"); err == nil {
		t.Error("a TokenRequest answer was restored, want it left out of the snapshot")
	}
	if left, _ := filepath.Glob(filepath.Join(data, "*"+restoreSuffix+"*")); len(left) != 0 {
		t.Errorf("got %v left, want no temporary copy", left)
	}
}

func TestRestoreRefusesDamage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.db")
	if err := os.WriteFile(bad, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := RestoreOptions{File: bad, DataDir: t.TempDir(), DBFile: testDB, DirMode: 0o700, Node: "n1"}
	if err := Restore(context.Background(), o, &bytes.Buffer{}); err == nil || !strings.HasPrefix(err.Error(), "snapshot restore: ") {
		t.Errorf("got %v, want a snapshot restore error", err)
	}
	if _, err := os.Stat(filepath.Join(o.DataDir, testDB)); !os.IsNotExist(err) {
		t.Errorf("got %v, want no store seeded", err)
	}
}
