package metastore

import (
	"database/sql"
	"net/url"
	"strconv"

	// Registers the "sqlite3" database/sql driver.
	_ "github.com/mattn/go-sqlite3"
)

// driverName is the database/sql driver registered by mattn/go-sqlite3.
const driverName = "sqlite3"

// Connection settings. Each is applied by the driver to every new
// connection through its DSN parameter.
const (
	// journalMode WAL lets readers work on a committed snapshot while the
	// writer appends, and makes a commit a single append to the log, which
	// a crash cannot tear. It is persistent in the file.
	journalMode = "WAL"
	// synchronousMode FULL fsyncs the WAL at every commit, so a batch whose
	// Apply returned survives a crash or power loss: an event becomes
	// visible to clients only after it is durable.
	synchronousMode = "FULL"
	// busyTimeoutMillis (milliseconds) is how long a connection waits for a
	// lock held by another process (a backup, the sqlite3 shell) before
	// failing with SQLITE_BUSY. Inside this process the single writer
	// connection already avoids lock contention.
	busyTimeoutMillis = 5000
	// foreignKeys turns on enforcement of REFERENCES clauses, which SQLite
	// leaves off by default, so any future migration's references hold.
	foreignKeys = "on"
	// writerTxLock makes the writer BEGIN IMMEDIATE: the write lock is taken
	// when the transaction starts, so it never fails later on a lock upgrade.
	writerTxLock = "immediate"
	// readerQueryOnly forbids writes on reader connections, so every write
	// goes through the single writer.
	readerQueryOnly = "on"
	// readerCacheKiB (KiB) bounds each reader connection's page cache,
	// which SQLite otherwise lets grow to 2000 KiB per connection outside
	// the Go heap. Readers scan each resource once at a restore and then
	// serve rare on-demand loads, so a larger cache is rarely hit again;
	// the writer keeps SQLite's default, which its index lookups reuse.
	readerCacheKiB = 512
	// secureDelete makes SQLite overwrite deleted and replaced rows with
	// zeros, so a secret dropped from the store leaves no bytes in the
	// database file (Scrub clears the write-ahead log).
	secureDelete = "on"
)

// Pool sizes.
const (
	// writerMaxConns is one: SQLite allows one writer at a time.
	writerMaxConns = 1
	// readerMaxConns (connections) bounds concurrent reads; WAL readers do
	// not block each other or the writer. Loads happen at start-up and on
	// demand, so a few connections suffice.
	readerMaxConns = 4
)

// writerDSN is the data source name for the writer connection.
func writerDSN(path string) string {
	p := commonParams()
	p.Set("_journal_mode", journalMode)
	p.Set("_txlock", writerTxLock)
	p.Set("_secure_delete", secureDelete)
	return fileDSN(path, p)
}

// readerDSN is the data source name for reader connections.
func readerDSN(path string) string {
	p := commonParams()
	p.Set("_query_only", readerQueryOnly)
	// A negative cache_size is in KiB rather than pages.
	p.Set("_cache_size", strconv.Itoa(-readerCacheKiB))
	return fileDSN(path, p)
}

// commonParams are the per-connection settings of every connection.
func commonParams() url.Values {
	return url.Values{
		"_synchronous":  {synchronousMode},
		"_busy_timeout": {strconv.Itoa(busyTimeoutMillis)},
		"_foreign_keys": {foreignKeys},
	}
}

// fileDSN builds an SQLite URI filename for path, escaping the characters
// URIs reserve ('?', '#', '%').
func fileDSN(path string, params url.Values) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + params.Encode()
}

// openPool opens a database/sql pool on dsn holding at most maxConns
// connections, all kept open for the life of the Store.
func openPool(dsn string, maxConns int) (*sql.DB, error) {
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return db, nil
}
