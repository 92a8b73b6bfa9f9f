package operations

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStoreStats(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	write := func(path string, n int) {
		t.Helper()
		if err := os.WriteFile(path, make([]byte, n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := storeStats(db); ok {
		t.Fatalf("got stats of a missing database, want none")
	}
	if _, ok := storeStats(""); ok {
		t.Fatalf("got stats with no path, want none")
	}
	write(db, 8192)
	tests := []struct {
		name string
		wal  int // -1: no write-ahead log
		want int64
	}{{"database alone", -1, 8192}, {"database and write-ahead log", 4096, 8192 + 4096}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.wal >= 0 {
				write(db+walSuffix, tt.wal)
			}
			st, ok := storeStats(db)
			if !ok || st.Bytes != tt.want {
				t.Errorf("got %d bytes (%v), want %d", st.Bytes, ok, tt.want)
			}
			if st.FSSize == 0 || st.FSAvailable > st.FSSize {
				t.Errorf("file system: got %d available of %d, want a size and no more available than it", st.FSAvailable, st.FSSize)
			}
		})
	}
}
