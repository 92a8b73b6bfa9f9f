package metastore

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// recoverNow is the fake clock's time; moved-aside files carry its Unix time.
var recoverNow = time.Unix(1700000000, 0)

// recoverOpts returns Options whose log lines go to buf.
func recoverOpts(buf *bytes.Buffer) Options {
	return Options{
		Logger: slog.New(slog.NewTextHandler(buf, nil)),
		Clock:  clocktesting.NewFakePassiveClock(recoverNow),
	}
}

// damage functions turn a sound database holding pods into a bad one.
var damages = []struct {
	name       string
	damage     func(t *testing.T, path string)
	wantReason string
}{
	{"garbage", func(t *testing.T, path string) {
		mustWrite(t, path, []byte(strings.Repeat("not a database ", 4096)))
	}, "not a database"},
	{"truncated", func(t *testing.T, path string) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, fi.Size()/2); err != nil {
			t.Fatal(err)
		}
	}, "corrupt"},
	{"damaged page", corruptLastPage, "corrupt"},
	{"future schema", func(t *testing.T, path string) {
		raw := MustRawDB(t, path)
		if _, err := raw.Exec("UPDATE schema_version SET version = ?", len(migrations)+1); err != nil {
			t.Fatal(err)
		}
		raw.Close()
	}, "schema version newer than supported"},
	{"foreign sqlite file", func(t *testing.T, path string) {
		mustRemove(t, path)
		raw := MustRawDB(t, path)
		if _, err := raw.Exec("CREATE TABLE objects (x TEXT)"); err != nil {
			t.Fatal(err)
		}
		raw.Close()
	}, "unexpected schema"},
}

func TestOpenOrRecoverMovesUnusableFileAside(t *testing.T) {
	for _, tt := range damages {
		t.Run(tt.name, func(t *testing.T) {
			path := testDBPath(t)
			s := MustOpen(t, path)
			mustFillPages(t, s)
			MustClose(t, s)
			tt.damage(t, path)
			before := mustRead(t, path)

			var logs bytes.Buffer
			s, rec, err := OpenOrRecover(context.Background(), path, recoverOpts(&logs))
			if err != nil {
				t.Fatalf("OpenOrRecover: got error %v, want nil", err)
			}
			defer s.Close()
			want := path + ".corrupt-1700000000"
			if !rec.Moved() || rec.MovedTo != want || !strings.Contains(rec.Reason, tt.wantReason) {
				t.Errorf("got %+v, want MovedTo %s and a reason containing %q", rec, want, tt.wantReason)
			}
			// Opening an SQLite file may rewrite its header (the journal
			// mode), so only its size is compared.
			if got := mustRead(t, want); len(got) != len(before) {
				t.Errorf("moved file: got %d bytes, want the %d bytes of the damaged file", len(got), len(before))
			}
			if line := logs.String(); !strings.Contains(line, "moved aside") || !strings.Contains(line, tt.wantReason) {
				t.Errorf("got log %q, want a line saying the file was moved aside and why", line)
			}
			wantLoad(t, s, "pods", nil, 0)
			MustApply(t, s, "pods", ops(upsert(obj("a", "x", 1))), 1)
			wantLoad(t, s, "pods", objs(obj("a", "x", 1)), 1)
		})
	}
}

// A database's WAL and shared-memory index travel with it.
func TestMoveAsideTakesSideFiles(t *testing.T) {
	path := testDBPath(t)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		mustWrite(t, path+suffix, []byte("damaged"+suffix))
	}
	got, err := moveAside(path, 42)
	if want := path + ".corrupt-42"; err != nil || got != want {
		t.Fatalf("moveAside: got %q, %v, want %q, nil", got, err, want)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if b := string(mustRead(t, got+suffix)); b != "damaged"+suffix {
			t.Errorf("%s: got %q, want %q", got+suffix, b, "damaged"+suffix)
		}
		if exists(path + suffix) {
			t.Errorf("%s still exists, want it moved", path+suffix)
		}
	}
}

// A sound database is opened as is; a second recovery in the same second
// does not overwrite the first moved-aside file.
func TestOpenOrRecoverKeepsSoundFileAndEarlierCopies(t *testing.T) {
	path := testDBPath(t)
	s := MustOpen(t, path)
	MustApply(t, s, "pods", ops(upsert(obj("a", "x", 1))), 1)
	MustClose(t, s)
	var logs bytes.Buffer
	s, rec, err := OpenOrRecover(context.Background(), path, recoverOpts(&logs))
	if err != nil || rec.Moved() || rec.Reason != "" {
		t.Fatalf("OpenOrRecover of a sound file: got %+v, %v, want no recovery", rec, err)
	}
	wantLoad(t, s, "pods", objs(obj("a", "x", 1)), 1)
	MustClose(t, s)

	for i, want := range []string{path + ".corrupt-1700000000", path + ".corrupt-1700000000.1"} {
		mustWrite(t, path, []byte(strings.Repeat("garbage ", 1024)))
		s, rec, err := OpenOrRecover(context.Background(), path, recoverOpts(&logs))
		if err != nil {
			t.Fatalf("recovery %d: got error %v, want nil", i, err)
		}
		MustClose(t, s)
		if rec.MovedTo != want {
			t.Errorf("recovery %d: got MovedTo %q, want %q", i, rec.MovedTo, want)
		}
	}
}

// Errors that say nothing about the file's content move nothing.
func TestOpenOrRecoverLeavesFileOnOtherErrors(t *testing.T) {
	path := testDBPath(t) + "/under-a-file/state.db"
	mustWrite(t, testDBPath(t), nil)
	parent := strings.TrimSuffix(path, "/under-a-file/state.db")
	mustWrite(t, parent, []byte("a file where a directory should be"))
	_, rec, err := OpenOrRecover(context.Background(), path, Options{})
	if err == nil || rec.Moved() {
		t.Fatalf("got %+v, %v, want an error and nothing moved", rec, err)
	}
	if got := string(mustRead(t, parent)); got != "a file where a directory should be" {
		t.Errorf("got %q at %s, want it untouched", got, parent)
	}
}

// A row that does not decode is logged and skipped; the others load.
func TestLoadSkipsUndecodableRow(t *testing.T) {
	path := testDBPath(t)
	var logs bytes.Buffer
	s, _, err := OpenOrRecover(context.Background(), path, recoverOpts(&logs))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	MustApply(t, s, "pods", ops(upsert(obj("a", "x", 1)), upsert(obj("a", "z", 3))), 3)
	raw := MustRawDB(t, path)
	if _, err := raw.Exec(`INSERT INTO objects (resource, namespace, name, rv, raw) VALUES ('pods', 'a', 'y', 'not a number', x'00')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	wantLoad(t, s, "pods", objs(obj("a", "x", 1), obj("a", "z", 3)), 3)
	if !strings.Contains(logs.String(), "skipping undecodable stored object") {
		t.Errorf("got log %q, want a line about the skipped row", logs.String())
	}
}

func mustWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustRemove(t *testing.T, path string) {
	t.Helper()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
}
