package metastore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReopenKeepsState(t *testing.T) {
	path := testDBPath(t)
	s := MustOpen(t, path)
	MustApply(t, s, "pods", ops(upsert(obj("a", "x", 7)), upsert(obj("b", "y", 8))), 8)
	MustApply(t, s, "nodes", ops(upsert(obj("", "n1", 9))), 9)
	if err := s.PutMeta(context.Background(), "version", []byte("v1.36.3")); err != nil {
		t.Fatalf("PutMeta: got error %v, want nil", err)
	}
	MustClose(t, s)

	s = MustOpen(t, path)
	wantLoad(t, s, "pods", objs(obj("a", "x", 7), obj("b", "y", 8)), 8)
	wantLoad(t, s, "nodes", objs(obj("", "n1", 9)), 9)
	got, err := s.GetMeta(context.Background(), "version")
	if err != nil || string(got) != "v1.36.3" {
		t.Fatalf("GetMeta after reopen: got %q, %v, want %q, nil", got, err, "v1.36.3")
	}
	if v := rawSchemaVersion(t, path); v != len(migrations) {
		t.Fatalf("schema version after reopen: got %d, want %d", v, len(migrations))
	}
}

func TestOpenPermissions(t *testing.T) {
	tests := []struct {
		name     string
		existing fs.FileMode // mode of a database file created before Open; 0 for none
	}{
		{"new file in new directories", 0},
		{"existing file with loose mode", 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "var", "lib")
			path := filepath.Join(dir, "state.db")
			if tt.existing != 0 {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, nil, tt.existing); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tt.existing); err != nil {
					t.Fatal(err)
				}
			}
			s := MustOpen(t, path)
			MustApply(t, s, "pods", ops(upsert(obj("a", "x", 1))), 1)
			for _, f := range []string{path, path + "-wal", path + "-shm"} {
				wantMode(t, f, fileMode)
			}
			if tt.existing == 0 {
				wantMode(t, dir, dirMode|fs.ModeDir)
				wantMode(t, filepath.Dir(dir), dirMode|fs.ModeDir)
			}
		})
	}
}

// wantMode checks path's mode and permission bits.
func wantMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat %s: got error %v, want nil", path, err)
	}
	if got := fi.Mode() & (fs.ModeType | fs.ModePerm); got != want {
		t.Errorf("mode of %s: got %v, want %v", filepath.Base(path), got, want)
	}
}

func TestConnectionSettings(t *testing.T) {
	s := MustOpen(t, testDBPath(t))
	tests := []struct {
		pool   string
		pragma string
		want   string
	}{
		{"writer", "journal_mode", "wal"},
		{"writer", "synchronous", "2"}, // FULL
		{"writer", "foreign_keys", "1"},
		{"writer", "busy_timeout", "5000"},
		{"writer", "query_only", "0"},
		{"writer", "cache_size", "-2000"}, // SQLite's default, in KiB
		{"reader", "journal_mode", "wal"},
		{"reader", "synchronous", "2"},
		{"reader", "foreign_keys", "1"},
		{"reader", "busy_timeout", "5000"},
		{"reader", "query_only", "1"},
		{"reader", "cache_size", "-512"},
	}
	for _, tt := range tests {
		t.Run(tt.pool+"/"+tt.pragma, func(t *testing.T) {
			db := s.writer
			if tt.pool == "reader" {
				db = s.reader
			}
			var got string
			if err := db.QueryRow("PRAGMA " + tt.pragma).Scan(&got); err != nil {
				t.Fatalf("PRAGMA %s: got error %v, want nil", tt.pragma, err)
			}
			if !strings.EqualFold(got, tt.want) {
				t.Fatalf("PRAGMA %s: got %q, want %q", tt.pragma, got, tt.want)
			}
		})
	}
}

// Every reader connection, not only the first the pool opens, has the
// small page cache: each is opened with it.
func TestEveryReaderHasSmallCache(t *testing.T) {
	s := MustOpen(t, testDBPath(t))
	ctx := context.Background()
	for i := range readerMaxConns {
		conn, err := s.reader.Conn(ctx) // held open, so the next is a new one
		if err != nil {
			t.Fatalf("reader connection %d: got error %v, want nil", i, err)
		}
		defer conn.Close()
		var got int
		if err := conn.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&got); err != nil {
			t.Fatalf("reader connection %d: PRAGMA cache_size: got error %v, want nil", i, err)
		}
		if got != -512 {
			t.Errorf("reader connection %d: got cache_size %d, want -512 (KiB)", i, got)
		}
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := testDBPath(t)
	MustClose(t, MustOpen(t, path))
	newer := len(migrations) + 1
	raw := MustRawDB(t, path)
	if _, err := raw.Exec("UPDATE schema_version SET version = ?", newer); err != nil {
		t.Fatalf("bump schema version: got error %v, want nil", err)
	}
	raw.Close()

	s, err := Open(context.Background(), path)
	if !errors.Is(err, ErrSchemaTooNew) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open: got error %v, want %v", err, ErrSchemaTooNew)
	}
	for _, want := range []string{fmt.Sprintf("schema version %d", newer), fmt.Sprintf("knows %d", len(migrations)), "snapshot restore"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open: got %q, want it to name %q", err, want)
		}
	}
	if v := rawSchemaVersion(t, path); v != newer {
		t.Fatalf("schema version after refused Open: got %d, want %d", v, newer)
	}
}

func TestOpenRejectsNonDatabase(t *testing.T) {
	path := testDBPath(t)
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 512)), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), path)
	if err == nil {
		s.Close()
		t.Fatalf("Open of a non-database file: got nil error, want an error")
	}
}

// rawSchemaVersion reads schema_version bypassing the Store.
func rawSchemaVersion(t *testing.T, path string) int {
	t.Helper()
	raw := MustRawDB(t, path)
	defer raw.Close()
	var v int
	if err := raw.QueryRow("SELECT version FROM schema_version WHERE id = 1").Scan(&v); err != nil {
		t.Fatalf("read schema version: got error %v, want nil", err)
	}
	return v
}

func TestClose(t *testing.T) {
	path := testDBPath(t)
	s := MustOpen(t, path)
	MustApply(t, s, "pods", ops(upsert(obj("a", "x", 1))), 1)
	MustClose(t, s)

	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("WAL size after Close: got %d, want 0 (checkpointed)", fi.Size())
	}
	ctx := context.Background()
	calls := map[string]func() error{
		"Close":          s.Close,
		"Apply":          func() error { return s.Apply(ctx, "pods", nil, 2) },
		"Load":           func() error { _, _, err := s.Load(ctx, "pods"); return err },
		"Resources":      func() error { _, err := s.Resources(ctx); return err },
		"Drop":           func() error { return s.Drop(ctx, "pods") },
		"PutMeta":        func() error { return s.PutMeta(ctx, "k", nil) },
		"GetMeta":        func() error { _, err := s.GetMeta(ctx, "k"); return err },
		"IntegrityCheck": func() error { return s.IntegrityCheck(ctx) },
	}
	for name, call := range calls {
		t.Run(name+" after Close", func(t *testing.T) {
			if err := call(); !errors.Is(err, ErrClosed) {
				t.Fatalf("%s after Close: got error %v, want %v", name, err, ErrClosed)
			}
		})
	}
}

func TestIntegrityCheck(t *testing.T) {
	path := testDBPath(t)
	s := MustOpen(t, path)
	if err := s.IntegrityCheck(context.Background()); err != nil {
		t.Fatalf("IntegrityCheck on a sound database: got error %v, want nil", err)
	}
	mustFillPages(t, s)
	MustClose(t, s)
	// Damage the file under an open store: its readers have not cached
	// the objects' pages, so the check reads the damaged ones.
	s = MustOpen(t, path)
	corruptLastPage(t, path)
	if err := s.IntegrityCheck(context.Background()); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("IntegrityCheck on a damaged database: got error %v, want %v", err, ErrCorrupt)
	}
}

// Open runs quick_check and refuses a damaged file, leaving it in place.
func TestOpenRejectsCorruptFile(t *testing.T) {
	path := testDBPath(t)
	s := MustOpen(t, path)
	mustFillPages(t, s)
	MustClose(t, s)
	corruptLastPage(t, path)
	s, err := Open(context.Background(), path)
	if !errors.Is(err, ErrCorrupt) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open of a damaged database: got error %v, want %v", err, ErrCorrupt)
	}
	if !exists(path) {
		t.Fatalf("Open moved %s away, want it left in place", path)
	}
}

// mustFillPages stores enough rows to fill many pages of the objects table.
func mustFillPages(t *testing.T, s *Store) {
	t.Helper()
	const objects = 2000
	batch := make([]Op, 0, objects)
	for i := range objects {
		batch = append(batch, upsert(obj("ns", fmt.Sprintf("object-with-a-long-name-%05d", i), uint64(i))))
	}
	MustApply(t, s, "pods", batch, objects)
}

// corruptPageSize (bytes) is SQLite's default page size.
const corruptPageSize = 4096

// corruptLastPage overwrites the file's last page, an objects page, with
// garbage.
func corruptLastPage(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 8*corruptPageSize {
		t.Fatalf("database size: got %d bytes, want at least %d", fi.Size(), 8*corruptPageSize)
	}
	garbage := []byte(strings.Repeat("\xff\x00garbage", corruptPageSize/9+1))[:corruptPageSize]
	if _, err := f.WriteAt(garbage, fi.Size()-corruptPageSize); err != nil {
		t.Fatal(err)
	}
}
