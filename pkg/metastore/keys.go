package metastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/apiserver-lite/apiserver-lite/pkg/jsonscan"
)

// Key is what identifies one stored object's state without its bytes.
type Key struct {
	Namespace string // "" for cluster-scoped objects
	Name      string
	RV        uint64
	// UID is the object's metadata.uid, "" if it has none or its stored
	// bytes are not a JSON object.
	UID string
}

// Name is one object's place in a resource.
type Name struct {
	Namespace, Name string
}

const (
	// loadKeysSQL reads the UID inside SQLite, so no object's bytes are
	// copied out. raw is cast to TEXT: a BLOB would be read as JSONB.
	loadKeysSQL = `SELECT namespace, name, rv,
	CASE WHEN json_valid(CAST(raw AS TEXT)) THEN json_extract(CAST(raw AS TEXT), '$.metadata.uid') END
FROM objects WHERE resource = ? ORDER BY namespace, name`
	loadNamedSQL = `SELECT rv, raw FROM objects WHERE resource = ? AND namespace = ? AND name = ?`
)

// Keys returns the key of every stored object of resource, ordered by
// namespace and name, and its watermark (0 if never synced), read in one
// transaction.
func (s *Store) Keys(ctx context.Context, resource string) ([]Key, uint64, error) {
	if err := s.checkOpen(); err != nil {
		return nil, 0, fmt.Errorf("load keys %s: %w", resource, err)
	}
	var keys []Key
	var wm uint64
	err := s.inReadTx(ctx, func(tx *sql.Tx) error {
		var err error
		if wm, err = scanWatermark(tx.QueryRowContext(ctx, getWatermarkSQL, resource)); err != nil {
			return err
		}
		if s.sealsResource(resource) {
			keys, err = s.loadSealedKeysTx(ctx, tx, resource)
			return err
		}
		keys, err = loadKeysTx(ctx, tx, resource)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("load keys %s: %w", resource, err)
	}
	return keys, wm, nil
}

func loadKeysTx(ctx context.Context, tx *sql.Tx, resource string) ([]Key, error) {
	rows, err := tx.QueryContext(ctx, loadKeysSQL, resource)
	if err != nil {
		return nil, fmt.Errorf("query keys: %w", err)
	}
	defer rows.Close()
	var keys []Key
	for rows.Next() {
		var k Key
		var rv int64
		var uid sql.NullString // a number or object decodes as its text
		if err := rows.Scan(&k.Namespace, &k.Name, &rv, &uid); err != nil {
			return nil, fmt.Errorf("read key: %w", err)
		}
		k.RV, k.UID = uint64(rv), uid.String // the schema CHECKs rv >= 0
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read keys: %w", err)
	}
	return keys, nil
}

// Objects returns the stored objects of resource at names, in the order of
// names, read in one transaction. A name not stored, or whose sealed value
// does not open (logged), is left out.
func (s *Store) Objects(ctx context.Context, resource string, names []Name) ([]Object, error) {
	if err := s.checkOpen(); err != nil {
		return nil, fmt.Errorf("load objects %s: %w", resource, err)
	}
	var objs []Object
	err := s.inReadTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, loadNamedSQL)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		defer stmt.Close()
		for _, n := range names {
			o := Object{Namespace: n.Namespace, Name: n.Name}
			var rv int64
			err := stmt.QueryRowContext(ctx, resource, n.Namespace, n.Name).Scan(&rv, &o.Raw)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return fmt.Errorf("read %s/%s: %w", n.Namespace, n.Name, err)
			}
			o.RV = uint64(rv) // the schema CHECKs rv >= 0
			if s.sealsResource(resource) {
				if o.Raw, err = s.open(o.Raw, objectAD(resource, o.Namespace, o.Name)); err != nil {
					s.log.Error("skipping stored object that does not open", "resource", resource,
						"namespace", n.Namespace, "name", n.Name, "err", err)
					continue
				}
			}
			objs = append(objs, o)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load objects %s: %w", resource, err)
	}
	return objs, nil
}

// loadSealedKeysTx is loadKeysTx for a sealed resource: SQLite cannot read
// the UID inside a sealed object, so each is opened here.
func (s *Store) loadSealedKeysTx(ctx context.Context, tx *sql.Tx, resource string) ([]Key, error) {
	objs, err := s.loadObjectsTx(ctx, tx, resource)
	if err != nil {
		return nil, err
	}
	keys := make([]Key, len(objs))
	for i, o := range objs {
		keys[i] = Key{Namespace: o.Namespace, Name: o.Name, RV: o.RV, UID: jsonscan.UID(o.Raw)}
	}
	return keys, nil
}
