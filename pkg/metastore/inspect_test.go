package metastore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A snapshot taken beside an open store is a consistent, private copy that
// Inspect reads without writing, and that Open accepts.
func TestSnapshotAndInspect(t *testing.T) {
	ctx := context.Background()
	src := testDBPath(t)
	s := MustOpen(t, src)
	ops := []Op{{Object: Object{Namespace: "ns", Name: "a", RV: 5, Raw: []byte(`{}`)}},
		{Object: Object{Namespace: "ns", Name: "b", RV: 6, Raw: []byte(`{}`)}}}
	if err := s.Apply(ctx, "/v1/configmaps", ops, 7); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if err := s.PutMeta(ctx, "node", []byte("n1")); err != nil {
		t.Fatalf("put meta: %v", err)
	}
	dst := filepath.Join(t.TempDir(), "snap.db")
	if err := Backup(ctx, src, dst); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	MustClose(t, s)
	if err := Backup(ctx, src, dst); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("snapshot over an existing file: got %v, want a refusal", err)
	}
	fi, err := os.Stat(dst)
	if err != nil || fi.Mode().Perm() != fileMode {
		t.Fatalf("snapshot file: got %v %v, want mode %v", fi.Mode(), err, fileMode)
	}
	r, err := Inspect(ctx, dst, "node", "absent")
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	if r.SchemaVersion != len(migrations) || r.Integrity != integrityOK || string(r.Meta["node"]) != "n1" || len(r.Meta) != 1 {
		t.Errorf("report: got %+v, want schema %d, integrity ok, meta node=n1 only", r, len(migrations))
	}
	if len(r.Resources) != 1 || r.Resources[0] != (ResourceReport{Key: "/v1/configmaps", Watermark: 7, Objects: 2}) {
		t.Errorf("resources: got %+v, want configmaps at 7 with 2 objects", r.Resources)
	}
	if _, err := Inspect(ctx, filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Errorf("inspect of a missing file: got nil, want an error")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dst), "missing.db")); err == nil {
		t.Errorf("inspect created a file")
	}
}
