package metastore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// testDBPath returns a database path inside a fresh temporary directory.
func testDBPath(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "state.db")
}

// MustOpen opens the store at path and closes it when the test ends,
// unless the test closed it already.
func MustOpen(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%q): got error %v, want nil", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("Close: got error %v, want nil", err)
		}
	})
	return s
}

// MustClose closes s.
func MustClose(t testing.TB, s *Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: got error %v, want nil", err)
	}
}

// MustApply applies one batch.
func MustApply(t testing.TB, s *Store, resource string, ops []Op, watermark uint64) {
	t.Helper()
	if err := s.Apply(context.Background(), resource, ops, watermark); err != nil {
		t.Fatalf("Apply(%s, %d ops, %d): got error %v, want nil", resource, len(ops), watermark, err)
	}
}

// MustLoad loads one resource.
func MustLoad(t testing.TB, s *Store, resource string) ([]Object, uint64) {
	t.Helper()
	objs, wm, err := s.Load(context.Background(), resource)
	if err != nil {
		t.Fatalf("Load(%s): got error %v, want nil", resource, err)
	}
	return objs, wm
}

// MustRawDB opens path with the plain driver, bypassing the Store, and
// closes it when the test ends.
func MustRawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driverName, path)
	if err != nil {
		t.Fatalf("sql.Open(%q): got error %v, want nil", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// wantLoad checks that resource holds exactly want at watermark wantWM.
func wantLoad(t testing.TB, s *Store, resource string, want []Object, wantWM uint64) {
	t.Helper()
	got, wm := MustLoad(t, s, resource)
	if wm != wantWM {
		t.Errorf("Load(%s) watermark: got %d, want %d", resource, wm, wantWM)
	}
	if d := diffObjects(got, want); d != "" {
		t.Errorf("Load(%s) objects: %s", resource, d)
	}
}

// obj builds an object whose Raw encodes its identity and rv.
func obj(ns, name string, rv uint64) Object {
	raw := fmt.Appendf(nil, `{"metadata":{"namespace":%q,"name":%q,"resourceVersion":"%d"}}`, ns, name, rv)
	return Object{Namespace: ns, Name: name, RV: rv, Raw: raw}
}

// upsert builds an upsert op.
func upsert(o Object) Op { return Op{Object: o} }

// del builds a delete op.
func del(ns, name string) Op { return Op{Delete: true, Object: Object{Namespace: ns, Name: name}} }

// ops and objs keep table literals short.
func ops(list ...Op) []Op          { return list }
func objs(list ...Object) []Object { return list }

// sameObject reports whether a and b are equal field by field.
func sameObject(a, b Object) bool {
	return a.Namespace == b.Namespace && a.Name == b.Name && a.RV == b.RV && bytes.Equal(a.Raw, b.Raw)
}

// describeRawMax (bytes) is how much of Raw a failure message shows.
const describeRawMax = 64

// describe formats o for failure messages.
func describe(o Object) string {
	raw := o.Raw
	if len(raw) > describeRawMax {
		raw = raw[:describeRawMax]
	}
	return fmt.Sprintf("%s/%s rv=%d raw(%d bytes)=%q", o.Namespace, o.Name, o.RV, len(o.Raw), raw)
}

// diffObjects describes the first difference between got and want, in
// order, or returns "".
func diffObjects(got, want []Object) string {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("got %d objects, want %d; missing %s", len(got), len(want), describe(want[i]))
		case i >= len(want):
			return fmt.Sprintf("got %d objects, want %d; extra %s", len(got), len(want), describe(got[i]))
		case !sameObject(got[i], want[i]):
			return fmt.Sprintf("object %d: got %s, want %s", i, describe(got[i]), describe(want[i]))
		}
	}
	return ""
}
