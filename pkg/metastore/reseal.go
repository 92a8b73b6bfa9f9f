package metastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// keyring is the state key a Store seals with and, during and after
// Rekey, the one before it, which still opens values read in a
// transaction that began before the rekey committed.
type keyring struct {
	current, previous Sealer
}

// sealer returns the key new values are sealed with; nil in plaintext
// mode.
func (s *Store) sealer() Sealer { return s.keys.Load().current }

// open unseals v with the current key, else the previous one.
func (s *Store) open(v, ad []byte) ([]byte, error) {
	k := s.keys.Load()
	out, err := unseal(k.current, v, ad)
	if err != nil && k.previous != nil {
		if prev, perr := unseal(k.previous, v, ad); perr == nil {
			return prev, nil
		}
	}
	return out, err
}

// Rekey re-encrypts every sealed value with next in one transaction and
// makes next the key new values are sealed with. Until it commits the old
// key stays in use; on any error nothing changes.
func (s *Store) Rekey(ctx context.Context, next Sealer) error {
	if err := s.checkOpen(); err != nil {
		return fmt.Errorf("rekey: %w", err)
	}
	if next == nil {
		return errors.New("rekey: no new key")
	}
	s.rekeyMu.Lock()
	defer s.rekeyMu.Unlock()
	before := s.keys.Load()
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := s.resealTx(ctx, tx, before.current, next); err != nil {
			return err
		}
		if err := putKeyCheckTx(ctx, tx, next); err != nil {
			return err
		}
		// The transaction holds the only writer connection: every write
		// after it seals with next, and readers open either key.
		s.keys.Store(&keyring{current: next, previous: before.current})
		return nil
	})
	if err != nil {
		s.keys.Store(before)
		return fmt.Errorf("rekey: %w", err)
	}
	return nil
}

// resealTx opens every sealed value with from (nil: plaintext) and seals
// it with to, inside tx.
func (s *Store) resealTx(ctx context.Context, tx *sql.Tx, from, to Sealer) error {
	resources, err := sealedResourcesTx(ctx, tx, &s.sealing)
	if err != nil {
		return err
	}
	for _, r := range resources {
		if err := resealObjectsTx(ctx, tx, r, from, to); err != nil {
			return fmt.Errorf("objects of %s: %w", r, err)
		}
		if err := resealEventsTx(ctx, tx, r, from, to); err != nil {
			return fmt.Errorf("events of %s: %w", r, err)
		}
	}
	return resealMetaTx(ctx, tx, &s.sealing, from, to)
}

// sealedResourcesTx lists the stored resources whose values are sealed.
// Every resource with objects or events has a sync state (Apply and Reset
// write it, Drop removes all three), so the small sync_state table names
// them without a scan of the objects.
func sealedResourcesTx(ctx context.Context, tx *sql.Tx, sg *Sealing) ([]string, error) {
	return listResources(ctx, tx, func(r string) bool { return sg.Resource != nil && sg.Resource(r) })
}

// resealed is one row's new values, found before any is written.
type resealed struct {
	args []any
}

// reseal1 opens v (ad) with from and seals it with to.
func reseal1(v, ad []byte, from, to Sealer) ([]byte, error) {
	plain, err := unseal(from, v, ad)
	if err != nil {
		return nil, err
	}
	return seal(to, plain, ad)
}

func resealObjectsTx(ctx context.Context, tx *sql.Tx, resource string, from, to Sealer) error {
	rows, err := tx.QueryContext(ctx, `SELECT namespace, name, raw FROM objects WHERE resource = ?`, resource)
	if err != nil {
		return err
	}
	var updates []resealed
	for rows.Next() {
		var ns, name string
		var raw []byte
		if err := rows.Scan(&ns, &name, &raw); err != nil {
			return errors.Join(err, rows.Close())
		}
		sealed, err := reseal1(raw, objectAD(resource, ns, name), from, to)
		if err != nil {
			return errors.Join(fmt.Errorf("%s/%s: %w", ns, name, err), rows.Close())
		}
		updates = append(updates, resealed{[]any{sealed, resource, ns, name}})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	return execAll(ctx, tx, `UPDATE objects SET raw = ? WHERE resource = ? AND namespace = ? AND name = ?`, updates)
}

func resealEventsTx(ctx context.Context, tx *sql.Tx, resource string, from, to Sealer) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, namespace, name, rv, raw, prev FROM events WHERE resource = ?`, resource)
	if err != nil {
		return err
	}
	var updates []resealed
	for rows.Next() {
		var id, rv int64
		var ns, name string
		var raw, prev []byte
		if err := rows.Scan(&id, &ns, &name, &rv, &raw, &prev); err != nil {
			return errors.Join(err, rows.Close())
		}
		r, err := reseal1(raw, eventAD(resource, ns, name, rv, "raw"), from, to)
		if err == nil {
			prev, err = reseal1(prev, eventAD(resource, ns, name, rv, "prev"), from, to)
		}
		if err != nil {
			return errors.Join(fmt.Errorf("event %d: %w", id, err), rows.Close())
		}
		updates = append(updates, resealed{[]any{r, prev, id}})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	return execAll(ctx, tx, `UPDATE events SET raw = ?, prev = ? WHERE id = ?`, updates)
}

func resealMetaTx(ctx context.Context, tx *sql.Tx, sg *Sealing, from, to Sealer) error {
	rows, err := tx.QueryContext(ctx, `SELECT key, value FROM meta`)
	if err != nil {
		return err
	}
	var updates []resealed
	for rows.Next() {
		var k string
		var v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return errors.Join(err, rows.Close())
		}
		if k == keyCheckKey || sg.Meta == nil || !sg.Meta(k) {
			continue
		}
		sealed, err := reseal1(v, metaAD(k), from, to)
		if err != nil {
			return errors.Join(fmt.Errorf("meta %s: %w", k, err), rows.Close())
		}
		updates = append(updates, resealed{[]any{sealed, k}})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	return execAll(ctx, tx, `UPDATE meta SET value = ? WHERE key = ?`, updates)
}

// execAll runs query once per update inside tx.
func execAll(ctx context.Context, tx *sql.Tx, query string, updates []resealed) error {
	for _, u := range updates {
		if _, err := tx.ExecContext(ctx, query, u.args...); err != nil {
			return err
		}
	}
	return nil
}
