package metastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
)

// Sealer encrypts values at rest with associated data (package seal's
// AEAD). Open fails for a value sealed with another key or another ad.
type Sealer interface {
	Seal(plain, ad []byte) ([]byte, error)
	Open(sealed, ad []byte) ([]byte, error)
}

// Sealing says what a Store encrypts and with which key.
type Sealing struct {
	// Sealer is the state key; nil stores every value in plaintext.
	Sealer Sealer
	// Resource reports the resources whose objects and logged events are
	// sealed (Secrets); nil seals none.
	Resource func(resource string) bool
	// Meta reports the meta keys whose values are sealed (stored tokens);
	// nil seals none.
	Meta func(key string) bool
}

// ErrWrongKey is returned by Open when the database was sealed with
// another state key: nothing of it is read or changed.
var ErrWrongKey = errors.New("state key does not open this database")

// ErrKeyRequired is returned by Open without a state key for a database
// whose values were sealed with one: nothing of it is read or changed.
var ErrKeyRequired = errors.New("database is encrypted, a state key is required")

// keyCheckKey is the meta key of the key check value: a known text sealed
// with the state key. Its presence says every sealed row is sealed.
const keyCheckKey = "seal/check"

// keyCheckText is what the key check value seals.
var keyCheckText = []byte("apiserver-lite state key check v1")

// sealsResource reports whether resource's values are sealed.
func (s *Store) sealsResource(resource string) bool {
	return s.sealer() != nil && s.sealing.Resource != nil && s.sealing.Resource(resource)
}

// resourceSealer returns the key resource's values are sealed with; nil
// when they are not sealed.
func (s *Store) resourceSealer(resource string) Sealer {
	if !s.sealsResource(resource) {
		return nil
	}
	return s.sealer()
}

// sealsMeta reports whether the value under a meta key is sealed.
func (s *Store) sealsMeta(key string) bool {
	return s.sealer() != nil && s.sealing.Meta != nil && key != keyCheckKey && s.sealing.Meta(key)
}

// sealFirst seals, in one transaction, the values a database without a
// key check value holds in plaintext, and stores the key check value:
// the first start with a state key.
func (s *Store) sealFirst(ctx context.Context) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := s.resealTx(ctx, tx, nil, s.sealer()); err != nil {
			return err
		}
		return putKeyCheckTx(ctx, tx, s.sealer())
	})
}

// Associated data: the row's key, so a sealed value cannot be moved to
// another row. The kinds differ in their first field.
func objectAD(resource, ns, name string) []byte {
	return []byte("object\x00" + resource + "\x00" + ns + "\x00" + name)
}

func eventAD(resource, ns, name string, rv int64, column string) []byte {
	return []byte("event\x00" + resource + "\x00" + ns + "\x00" + name + "\x00" + strconv.FormatInt(rv, 10) + "\x00" + column)
}

func metaAD(key string) []byte { return []byte("meta\x00" + key) }

// seal seals a non-empty value with sealer; nil and empty pass unchanged.
func seal(sealer Sealer, v, ad []byte) ([]byte, error) {
	if len(v) == 0 || sealer == nil {
		return v, nil
	}
	return sealer.Seal(v, ad)
}

// unseal is seal's inverse.
func unseal(sealer Sealer, v, ad []byte) ([]byte, error) {
	if len(v) == 0 || sealer == nil {
		return v, nil
	}
	return sealer.Open(v, ad)
}

// checkKey compares the Store's sealing with the database before anything
// else reads or writes it: a key check value needs the key that made it.
// present reports whether the database has a key check value.
func checkKey(ctx context.Context, db *sql.DB, sealer Sealer) (present bool, err error) {
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'`).Scan(&tables); err != nil {
		return false, fmt.Errorf("read tables: %w", err)
	}
	if tables == 0 {
		return false, nil // a new database
	}
	var check []byte
	switch err := db.QueryRowContext(ctx, getMetaSQL, keyCheckKey).Scan(&check); {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read key check: %w", err)
	case sealer == nil:
		return true, ErrKeyRequired
	}
	if _, err := sealer.Open(check, metaAD(keyCheckKey)); err != nil {
		return true, ErrWrongKey
	}
	return true, nil
}

// putKeyCheckTx stores the key check value of sealer.
func putKeyCheckTx(ctx context.Context, tx *sql.Tx, sealer Sealer) error {
	check, err := sealer.Seal(keyCheckText, metaAD(keyCheckKey))
	if err != nil {
		return fmt.Errorf("seal key check: %w", err)
	}
	if _, err := tx.ExecContext(ctx, putMetaSQL, keyCheckKey, check); err != nil {
		return fmt.Errorf("store key check: %w", err)
	}
	return nil
}
