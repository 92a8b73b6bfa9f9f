package metastore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/mattn/go-sqlite3"
)

// corruptSuffix precedes the Unix time in the name of a moved-aside
// database: "<name>.corrupt-<unix-time>".
const corruptSuffix = ".corrupt-"

// Recovery tells why OpenOrRecover moved a database aside. The zero value
// means the database was usable and nothing was moved.
type Recovery struct {
	// Reason is why the file could not be used, for logs and readiness
	// reports: SQLite's findings, a too new schema version, or "not a
	// database".
	Reason string
	// MovedTo is the path the file now has; its -wal and -shm side files,
	// if any, were moved next to it with the same suffixes.
	MovedTo string
}

// Moved reports whether a database was moved aside.
func (r Recovery) Moved() bool { return r.MovedTo != "" }

// OpenOrRecover opens the database at path like Open, except that a file
// Open refuses for its content (corrupt, truncated, not SQLite, written by
// a newer schema, or another program's tables) is moved aside to
// "<path>.corrupt-<unix-time>" with its side files, logged with the
// reason, and replaced by a fresh, empty database. The returned Recovery
// says what happened. Errors that say nothing about the file (permissions,
// a full disk) are returned, and nothing is moved.
func OpenOrRecover(ctx context.Context, path string, opts Options) (*Store, Recovery, error) {
	opts = opts.withDefaults()
	s, err := openWith(ctx, path, opts)
	if err == nil || !unusable(err) {
		return s, Recovery{}, err
	}
	rec := Recovery{Reason: reason(err)}
	if rec.MovedTo, err = moveAside(path, opts.Clock.Now().Unix()); err != nil {
		return nil, Recovery{}, fmt.Errorf("open metastore: %s; move aside: %w", rec.Reason, err)
	}
	opts.Logger.Error("database unusable, moved aside; starting with an empty one",
		"path", path, "movedTo", rec.MovedTo, "reason", rec.Reason)
	s, err = openWith(ctx, path, opts)
	if err != nil {
		return nil, rec, err
	}
	return s, rec, nil
}

// unusable reports whether err says the file's content cannot be used.
func unusable(err error) bool {
	if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrSchemaTooNew) || errors.Is(err, errForeignSchema) {
		return true
	}
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB)
}

// reason is err's message without the "open metastore: " context every
// Open error carries.
func reason(err error) string {
	if u := errors.Unwrap(err); u != nil {
		return u.Error()
	}
	return err.Error()
}

// moveAside renames path and its side files to path + ".corrupt-<unix>"
// (plus the side file's suffix), refusing to overwrite an earlier one, and
// returns the new path. The side files move first, so a crash midway
// never leaves a database next to a WAL that is not its own.
func moveAside(path string, unix int64) (string, error) {
	dst := path + corruptSuffix + strconv.FormatInt(unix, 10)
	for i := 1; exists(dst); i++ {
		dst = path + corruptSuffix + strconv.FormatInt(unix, 10) + "." + strconv.Itoa(i)
	}
	for _, suffix := range sideFileSuffixes {
		err := os.Rename(path+suffix, dst+suffix)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	if err := os.Rename(path, dst); err != nil {
		return "", err
	}
	return dst, syncDir(filepath.Dir(path))
}

// exists reports whether a file exists at path.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// syncDir fsyncs a directory so renames in it survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
