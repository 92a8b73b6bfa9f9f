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
