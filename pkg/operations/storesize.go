package operations

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/metrics"
	"golang.org/x/sys/unix"
)

// walSuffix names SQLite's write-ahead log beside the database.
const walSuffix = "-wal"

// storeStats reads the size of the store at path (the database and its
// write-ahead log) and the room on its file system, for the metrics; false
// when the database cannot be read.
func storeStats(path string) (metrics.StoreStats, bool) {
	if path == "" {
		return metrics.StoreStats{}, false
	}
	db, err := os.Stat(path)
	if err != nil {
		return metrics.StoreStats{}, false
	}
	st := metrics.StoreStats{Bytes: db.Size()}
	if wal, err := os.Stat(path + walSuffix); err == nil {
		st.Bytes += wal.Size()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return metrics.StoreStats{}, false
	}
	var fsst unix.Statfs_t
	if unix.Statfs(filepath.Dir(path), &fsst) == nil && fsst.Bsize > 0 {
		st.FSAvailable = fsst.Bavail * uint64(fsst.Bsize)
		st.FSSize = fsst.Blocks * uint64(fsst.Bsize)
	}
	return st, true
}
