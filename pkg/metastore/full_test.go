package metastore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bigBatch returns n upserts of objects of about size bytes each, named
// with prefix.
func bigBatch(prefix string, n, size int) []Op {
	out := make([]Op, 0, n)
	pad := strings.Repeat("x", size)
	for i := range n {
		o := obj("ns", fmt.Sprintf("%s-%04d", prefix, i), uint64(i+1))
		o.Raw = append(o.Raw, pad...)
		out = append(out, upsert(o))
	}
	return out
}

// setMaxPages caps the database at n pages on the writer connection: past
// it SQLite fails writes with SQLITE_FULL, exactly as on a full disk.
func setMaxPages(t *testing.T, s *Store, n int64) {
	t.Helper()
	if _, err := s.writer.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", n)); err != nil {
		t.Fatal(err)
	}
}

// A commit refused for lack of space reports ErrStorageFull, writes
// nothing, and leaves the store serving and accepting writes once space
// returns.
func TestApplyWhenFull(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t, testDBPath(t))
	MustApply(t, s, "pods", ops(upsert(obj("a", "x", 1))), 1)
	var pages int64
	if err := s.writer.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	setMaxPages(t, s, pages)
	batch := bigBatch("big", 200, 1024)
	err := s.Apply(ctx, "pods", batch, 300)
	if !errors.Is(err, ErrStorageFull) || !errors.Is(err, ErrWrite) {
		t.Fatalf("Apply past the size limit: got %v, want %v (and %v)", err, ErrStorageFull, ErrWrite)
	}
	wantLoad(t, s, "pods", objs(obj("a", "x", 1)), 1)
	if err := s.PutMeta(ctx, "k", []byte(strings.Repeat("v", 64<<10))); !errors.Is(err, ErrStorageFull) {
		t.Fatalf("PutMeta past the size limit: got %v, want %v", err, ErrStorageFull)
	}

	setMaxPages(t, s, 1<<30)
	MustApply(t, s, "pods", batch, 300)
	if got, _ := MustLoad(t, s, "pods"); len(got) != len(batch)+1 {
		t.Fatalf("after space returned: got %d objects, want %d", len(got), len(batch)+1)
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatalf("IntegrityCheck: got %v, want nil", err)
	}
}

// tmpfsSize (bytes) is the size of the file system TestApplyOnFullDisk
// fills: room for an empty database, its WAL and a filler file.
const tmpfsSize = 4 << 20

// On a really full file system the same holds. It needs the right to
// mount a tmpfs (root); TestApplyWhenFull covers the same path without it.
func TestApplyOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0700", tmpfsSize), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v: %s); TestApplyWhenFull covers this path", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	MustApply(t, s, "pods", ops(upsert(obj("a", "x", 1))), 1)
	filler := filepath.Join(dir, "filler")
	fillDisk(t, filler)

	batch := bigBatch("big", 400, 1024)
	err = s.Apply(ctx, "pods", batch, 500)
	t.Logf("Apply on a full disk: %v", err)
	if !errors.Is(err, ErrStorageFull) && !errors.Is(err, ErrWrite) {
		t.Fatalf("Apply on a full disk: got %v, want %v", err, ErrStorageFull)
	}
	wantLoad(t, s, "pods", objs(obj("a", "x", 1)), 1)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	MustApply(t, s, "pods", batch, 500)
	if got, wm := MustLoad(t, s, "pods"); len(got) != len(batch)+1 || wm != 500 {
		t.Fatalf("after space returned: got %d objects at %d, want %d at 500", len(got), wm, len(batch)+1)
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatalf("IntegrityCheck: got %v, want nil", err)
	}
}

// fillDisk writes path until the file system is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			return // ENOSPC: full
		}
	}
}
