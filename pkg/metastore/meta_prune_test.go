package metastore

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// PruneMeta deletes only what dead reports under the prefix, and after a
// Scrub the deleted values' bytes are in no file.
func TestPruneMeta(t *testing.T) {
	ctx := context.Background()
	path := testDBPath(t)
	s := MustOpen(t, path)
	dead := []byte("cHJ1bmVkLXRva2VuLWJ5dGVz-marker")
	values := map[string][]byte{"p/dead": dead, "p/alive": []byte("alive"), "q/dead-elsewhere": append(dead, '2')}
	for k, v := range values {
		if err := s.PutMeta(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	if hits := filesContaining(t, filepath.Dir(path), dead); len(hits) == 0 {
		t.Fatal("value bytes not found on disk after insert; the test cannot see them")
	}
	n, err := s.PruneMeta(ctx, "p/", func(v []byte) bool { return bytes.HasPrefix(v, dead) })
	if err != nil || n != 1 {
		t.Fatalf("PruneMeta: got %d, %v; want 1, nil", n, err)
	}
	for k, want := range map[string]bool{"p/dead": false, "p/alive": true, "q/dead-elsewhere": true} {
		_, err := s.GetMeta(ctx, k)
		if got := err == nil; got != want || (err != nil && !errors.Is(err, ErrNotFound)) {
			t.Errorf("%s present: got %v (%v), want %v", k, got, err, want)
		}
	}
	if err := s.DeleteMeta(ctx, "q/dead-elsewhere"); err != nil {
		t.Fatal(err)
	}
	if err := s.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	if hits := filesContaining(t, filepath.Dir(path), dead); len(hits) != 0 {
		t.Errorf("pruned bytes still in %v after Scrub, want in no file", hits)
	}
	if _, err := s.PruneMeta(ctx, "", func([]byte) bool { return true }); err == nil {
		t.Error("PruneMeta with an empty prefix: got nil, want an error")
	}
}
