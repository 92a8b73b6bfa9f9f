package metastore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sealpkg "github.com/apiserver-lite/apiserver-lite/pkg/seal"
)

const sealedResource = "/v1/secrets"

// testSealing seals sealedResource and meta keys under "token/".
func testSealing(t testing.TB) Sealing {
	t.Helper()
	key, err := sealpkg.Generate()
	if err != nil {
		t.Fatal(err)
	}
	a, err := sealpkg.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return Sealing{Sealer: a, Resource: func(r string) bool { return r == sealedResource },
		Meta: func(k string) bool { return strings.HasPrefix(k, "token/") }}
}

func openSealed(t testing.TB, path string, sg Sealing) *Store {
	t.Helper()
	s, err := openWith(context.Background(), path, Options{Sealing: sg})
	if err != nil {
		t.Fatalf("Open: got %v, want nil", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func secretObj(name, value string, rv uint64) Object {
	return Object{Namespace: "ns", Name: name, RV: rv,
		Raw: []byte(`{"metadata":{"name":"` + name + `","uid":"uid-` + name + `"},"data":{"k":"` + value + `"}}`)}
}

// fillSealed stores a secret with a logged change (so its old value is
// in the event log's prev column) and a sealed meta value.
func fillSealed(t *testing.T, s *Store) {
	t.Helper()
	MustApply(t, s, sealedResource, ops(upsert(secretObj("a", "old-value-marker", 5))), 5)
	MustApply(t, s, sealedResource, ops(upsert(secretObj("a", "new-value-marker", 6))), 6)
	if err := s.PutMeta(context.Background(), "token/pod", []byte("token-marker")); err != nil {
		t.Fatal(err)
	}
}

var sealedMarkers = []string{"old-value-marker", "new-value-marker", "token-marker"}

func TestSealedRoundTrip(t *testing.T) {
	path, sg := testDBPath(t), testSealing(t)
	s := openSealed(t, path, sg)
	fillSealed(t, s)
	MustClose(t, s)
	for _, m := range sealedMarkers {
		if hits := filesContaining(t, filepath.Dir(path), []byte(m)); len(hits) != 0 {
			t.Errorf("%s found in %v, want in no file", m, hits)
		}
	}
	s = openSealed(t, path, sg)
	snap, err := s.LoadSnapshot(context.Background(), sealedResource)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Objects) != 1 || !bytes.Contains(snap.Objects[0].Raw, []byte("new-value-marker")) {
		t.Fatalf("got objects %v, want the new value", snap.Objects)
	}
	if len(snap.Events) != 1 || !bytes.Contains(snap.Events[0].Prev, []byte("old-value-marker")) ||
		!bytes.Contains(snap.Events[0].Object.Raw, []byte("new-value-marker")) {
		t.Fatalf("got events %+v, want the change from old to new", snap.Events)
	}
	keys, _, err := s.Keys(context.Background(), sealedResource)
	if err != nil || len(keys) != 1 || keys[0].UID != "uid-a" {
		t.Fatalf("got keys %+v, %v, want uid-a", keys, err)
	}
	got, err := s.GetMeta(context.Background(), "token/pod")
	if err != nil || string(got) != "token-marker" {
		t.Fatalf("got %q, %v, want token-marker", got, err)
	}
}

func TestSealedValueMovedToAnotherRowDoesNotOpen(t *testing.T) {
	path, sg := testDBPath(t), testSealing(t)
	s := openSealed(t, path, sg)
	MustApply(t, s, sealedResource, ops(upsert(secretObj("a", "a-marker", 5)), upsert(secretObj("b", "b-marker", 5))), 5)
	MustClose(t, s)
	db := MustRawDB(t, path)
	if _, err := db.Exec(`UPDATE objects SET raw = (SELECT raw FROM objects WHERE name = 'a') WHERE name = 'b'`); err != nil {
		t.Fatal(err)
	}
	s = openSealed(t, path, sg)
	objs, _ := MustLoad(t, s, sealedResource)
	if len(objs) != 1 || objs[0].Name != "a" {
		t.Fatalf("got %d objects %v, want only a: b's row holds a's sealed value", len(objs), objs)
	}
}

// fileBytes reads every file under dir.
func fileBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func TestOpenRefusesAnotherKey(t *testing.T) {
	path, sg := testDBPath(t), testSealing(t)
	s := openSealed(t, path, sg)
	fillSealed(t, s)
	MustClose(t, s)
	before := fileBytes(t, filepath.Dir(path))
	for name, tc := range map[string]struct {
		sealing Sealing
		want    error
	}{
		"another key": {testSealing(t), ErrWrongKey},
		"no key":      {Sealing{}, ErrKeyRequired},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := openWith(context.Background(), path, Options{Sealing: tc.sealing})
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			_, _, rerr := OpenOrRecover(context.Background(), path, Options{Sealing: tc.sealing})
			if !errors.Is(rerr, tc.want) {
				t.Fatalf("OpenOrRecover: got %v, want %v", rerr, tc.want)
			}
			after := fileBytes(t, filepath.Dir(path))
			if len(after) != len(before) {
				t.Fatalf("got files %d, want %d: the data was touched", len(after), len(before))
			}
			for f, b := range before {
				if !bytes.Equal(after[f], b) {
					t.Fatalf("%s changed: the data was touched", f)
				}
			}
		})
	}
}

func TestFirstKeySealsPlaintext(t *testing.T) {
	path, sg := testDBPath(t), testSealing(t)
	s := openSealed(t, path, Sealing{Resource: sg.Resource, Meta: sg.Meta})
	fillSealed(t, s)
	MustClose(t, s)
	if hits := filesContaining(t, filepath.Dir(path), []byte("token-marker")); len(hits) == 0 {
		t.Fatal("plaintext not on disk before a key is set; the test cannot see it")
	}
	s = openSealed(t, path, sg)
	if err := s.Scrub(context.Background()); err != nil {
		t.Fatal(err)
	}
	MustClose(t, s)
	for _, m := range sealedMarkers {
		if hits := filesContaining(t, filepath.Dir(path), []byte(m)); len(hits) != 0 {
			t.Errorf("%s found in %v after the first start with a key, want in no file", m, hits)
		}
	}
	s = openSealed(t, path, sg)
	if got, err := s.GetMeta(context.Background(), "token/pod"); err != nil || string(got) != "token-marker" {
		t.Fatalf("got %q, %v, want token-marker", got, err)
	}
}

func TestRekey(t *testing.T) {
	path, oldKey, newKey := testDBPath(t), testSealing(t), testSealing(t)
	s := openSealed(t, path, oldKey)
	fillSealed(t, s)
	if err := s.Rekey(context.Background(), newKey.Sealer); err != nil {
		t.Fatalf("Rekey: got %v, want nil", err)
	}
	if got, err := s.GetMeta(context.Background(), "token/pod"); err != nil || string(got) != "token-marker" {
		t.Fatalf("after Rekey: got %q, %v, want token-marker", got, err)
	}
	MustClose(t, s)
	if _, err := openWith(context.Background(), path, Options{Sealing: oldKey}); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("old key: got %v, want ErrWrongKey", err)
	}
	db := MustRawDB(t, path)
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM objects WHERE resource = ?`, sealedResource).Scan(&n); err != nil || n != 1 {
		t.Fatalf("got %d rows, %v", n, err)
	}
	var raw []byte
	if err := db.QueryRow(`SELECT raw FROM objects WHERE name = 'a'`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if _, err := oldKey.Sealer.Open(raw, objectAD(sealedResource, "ns", "a")); err == nil {
		t.Fatal("the old key still opens the object after Rekey")
	}
	s = openSealed(t, path, Sealing{Sealer: newKey.Sealer, Resource: oldKey.Resource, Meta: oldKey.Meta})
	snap, err := s.LoadSnapshot(context.Background(), sealedResource)
	if err != nil || len(snap.Events) != 1 || !bytes.Contains(snap.Events[0].Prev, []byte("old-value-marker")) {
		t.Fatalf("got %+v, %v, want the logged change readable with the new key", snap.Events, err)
	}
}

// Rekey while batches keep committing: afterwards, read with the new key
// alone, the event log has no gap and every value opens.
func TestRekeyUnderLoad(t *testing.T) {
	path, oldKey, newKey := testDBPath(t), testSealing(t), testSealing(t)
	s := openSealed(t, path, oldKey)
	const batches = 200
	MustApply(t, s, sealedResource, ops(upsert(secretObj("s0", "v0", 1))), 1)
	done, half := make(chan error, 1), make(chan struct{})
	go func() {
		for rv := uint64(2); rv <= batches; rv++ {
			if rv == batches/2 {
				close(half) // rekey while the second half commits
			}
			name := "s" + strconv.FormatUint(rv%5, 10)
			if err := s.Apply(context.Background(), sealedResource, ops(upsert(secretObj(name, "v"+name, rv))), rv); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case <-half:
	case err := <-done:
		t.Fatalf("Apply: %v", err)
	}
	if err := s.Rekey(context.Background(), newKey.Sealer); err != nil {
		t.Fatalf("Rekey: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Apply during Rekey: %v", err)
	}
	MustClose(t, s)
	s = openSealed(t, path, Sealing{Sealer: newKey.Sealer, Resource: oldKey.Resource, Meta: oldKey.Meta})
	snap, err := s.LoadSnapshot(context.Background(), sealedResource)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Objects) != 5 {
		t.Fatalf("got %d objects, want 5", len(snap.Objects))
	}
	if snap.LogFloor != 1 {
		t.Fatalf("got log floor %d, want 1: events logged before the rekey were lost", snap.LogFloor)
	}
	want := snap.LogFloor + 1
	for _, e := range snap.Events {
		if e.Object.RV != want || len(e.Object.Raw) == 0 {
			t.Fatalf("got event at RV %d (%d bytes), want RV %d: a gap in the log", e.Object.RV, len(e.Object.Raw), want)
		}
		want++
	}
	if want != batches+1 || snap.Watermark != batches {
		t.Fatalf("log ends at %d, watermark %d, want both at %d", want-1, snap.Watermark, batches)
	}
}
