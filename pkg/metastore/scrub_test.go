package metastore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// filesContaining returns the files under dir whose bytes contain needle.
func filesContaining(t *testing.T, dir string, needle []byte) []string {
	t.Helper()
	var hits []string
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, needle) {
			hits = append(hits, filepath.Base(path))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return hits
}

func TestScrubRemovesDeletedBytes(t *testing.T) {
	path := testDBPath(t)
	s := MustOpen(t, path)
	secret := []byte("c2VjcmV0LWJ5dGVzLXRoYXQtbXVzdC1nbw-marker")
	keep := []byte("kept-object-marker")
	obj := func(name string, raw []byte) Object {
		return Object{Namespace: "ns", Name: name, RV: 5, Raw: raw}
	}
	MustApply(t, s, "v1/secrets", []Op{{Object: obj("gone", secret)}, {Object: obj("kept", keep)}}, 5)
	dir := filepath.Dir(path)
	if hits := filesContaining(t, dir, secret); len(hits) == 0 {
		t.Fatalf("secret bytes not found on disk after insert; the test cannot see them")
	}
	MustApply(t, s, "v1/secrets", []Op{{Delete: true, Object: obj("gone", nil)}}, 6)
	if err := s.Scrub(context.Background()); err != nil {
		t.Fatalf("Scrub: got %v, want nil", err)
	}
	if hits := filesContaining(t, dir, secret); len(hits) != 0 {
		t.Errorf("deleted bytes still in %v after Scrub, want in no file", hits)
	}
	if hits := filesContaining(t, dir, keep); len(hits) == 0 {
		t.Errorf("kept object's bytes are in no file, want in the database")
	}
	objs, _ := MustLoad(t, s, "v1/secrets")
	if len(objs) != 1 || objs[0].Name != "kept" {
		t.Errorf("got %v, want only the kept object", objs)
	}
}

func TestScrubClosed(t *testing.T) {
	s := MustOpen(t, testDBPath(t))
	MustClose(t, s)
	if err := s.Scrub(context.Background()); err == nil {
		t.Errorf("Scrub after Close: got nil, want an error")
	}
}

// An object whose events are in the event log leaves the disk only with
// them: a delete without an encoding restarts the log, so after Scrub no
// event or previous state holds the object's bytes.
func TestScrubRemovesLoggedBytes(t *testing.T) {
	path := testDBPath(t)
	s := MustOpen(t, path)
	secret := []byte("bG9nZ2VkLXNlY3JldC1ieXRlcw-marker")
	MustApply(t, s, "v1/secrets", []Op{{Object: Object{Namespace: "ns", Name: "kept", RV: 5, Raw: []byte(`{"k":1}`)}}}, 5)
	MustApply(t, s, "v1/secrets", []Op{{Object: Object{Namespace: "ns", Name: "gone", RV: 6, Raw: secret}}}, 6)
	MustApply(t, s, "v1/secrets", []Op{{Object: Object{Namespace: "ns", Name: "gone", RV: 7, Raw: append(secret, '2')}}}, 7)
	snap, err := s.LoadSnapshot(context.Background(), "v1/secrets")
	if err != nil || len(snap.Events) != 2 {
		t.Fatalf("got %d logged events (err %v), want 2: the test must see the bytes logged", len(snap.Events), err)
	}
	MustApply(t, s, "v1/secrets", []Op{{Delete: true, Object: Object{Namespace: "ns", Name: "gone", RV: 8}}}, 8)
	if err := s.Scrub(context.Background()); err != nil {
		t.Fatalf("Scrub: got %v, want nil", err)
	}
	if hits := filesContaining(t, filepath.Dir(path), secret); len(hits) != 0 {
		t.Errorf("deleted object's bytes still in %v after Scrub, want in no file", hits)
	}
	if snap, err = s.LoadSnapshot(context.Background(), "v1/secrets"); err != nil || len(snap.Events) != 0 || snap.LogFloor != 8 {
		t.Errorf("got %d events, floor %d (err %v), want an empty log from 8", len(snap.Events), snap.LogFloor, err)
	}
}
