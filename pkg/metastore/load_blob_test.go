package metastore

import (
	"database/sql"
	"testing"
)

// A blob scanned into sql.RawBytes stays intact and unshared after the
// next row is read: ownedBlob relies on the driver handing out a new
// slice per value.
func TestScannedBlobsAreNotReused(t *testing.T) {
	s := MustOpen(t, testDBPath(t))
	MustApply(t, s, "pods", ops(upsert(obj("ns", "a", 1)), upsert(obj("ns", "b", 2))), 2)
	rows, err := s.reader.Query(loadObjectsSQL, "pods")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var kept [][]byte
	var want []string
	for rows.Next() {
		var ns, name string
		var rv int64
		var raw sql.RawBytes
		if err := rows.Scan(&ns, &name, &rv, &raw); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, ownedBlob(raw))
		want = append(want, string(raw))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 2 {
		t.Fatalf("got %d rows, want 2", len(kept))
	}
	for i, b := range kept {
		if string(b) != want[i] || len(b) == 0 {
			t.Errorf("row %d: got %q after later reads, want %q", i, b, want[i])
		}
	}
	if &kept[0][0] == &kept[1][0] {
		t.Errorf("rows share one buffer, want a slice per value")
	}
}

// Restored events keep their own encodings and previous states, intact
// after the whole log is read, with no prev (NULL) for an ADDED event.
func TestRestoredEventsOwnTheirBytes(t *testing.T) {
	s := MustOpen(t, testDBPath(t))
	MustApply(t, s, "pods", ops(upsert(obj("a", "x", 1))), 1)
	MustApply(t, s, "pods", ops(upsert(obj("a", "x", 2)), upsert(obj("a", "y", 3)), delAt("a", "x", 4)), 4)
	events := mustSnapshot(t, s, "pods").Events
	want := []struct {
		raw, prev Object
		hasPrev   bool
	}{
		{obj("a", "x", 2), obj("a", "x", 1), true},
		{obj("a", "y", 3), Object{}, false},
		{obj("a", "x", 4), obj("a", "x", 2), true},
	}
	if len(events) != len(want) {
		t.Fatalf("got %d events, want %d", len(events), len(want))
	}
	seen := map[*byte]int{}
	for i, w := range want {
		e := events[i]
		if string(e.Object.Raw) != string(w.raw.Raw) {
			t.Errorf("event %d: got raw %q, want %q", i, e.Object.Raw, w.raw.Raw)
		}
		if (e.Prev != nil) != w.hasPrev || string(e.Prev) != string(w.prev.Raw) {
			t.Errorf("event %d: got prev %q (nil: %t), want %q (nil: %t)", i, e.Prev, e.Prev == nil, w.prev.Raw, !w.hasPrev)
		}
		for _, b := range [][]byte{e.Object.Raw, e.Prev} {
			if len(b) == 0 {
				continue
			}
			if j, ok := seen[&b[0]]; ok {
				t.Errorf("event %d shares a buffer with event %d, want a slice per value", i, j)
			}
			seen[&b[0]] = i
		}
	}
}

// An encoding stored as text rather than a blob, as a damaged or foreign
// file may hold, is still read into a slice of its own: database/sql
// would otherwise scan it into a buffer that the next row overwrites.
func TestTextEncodingsAreNotShared(t *testing.T) {
	path := testDBPath(t)
	s := MustOpen(t, path)
	MustApply(t, s, "pods", ops(upsert(obj("a", "x", 1))), 1)
	MustApply(t, s, "pods", ops(upsert(obj("a", "y", 2)), upsert(obj("a", "y", 3))), 3)
	raw := MustRawDB(t, path)
	for _, q := range []string{
		`UPDATE objects SET raw = CAST(raw AS TEXT)`,
		`UPDATE events SET raw = CAST(raw AS TEXT), prev = CAST(prev AS TEXT)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	snap := mustSnapshot(t, s, "pods")
	wantObjs := objs(obj("a", "x", 1), obj("a", "y", 3))
	if len(snap.Objects) != len(wantObjs) {
		t.Fatalf("got %d objects, want %d", len(snap.Objects), len(wantObjs))
	}
	for i, w := range wantObjs {
		if got := string(snap.Objects[i].Raw); got != string(w.Raw) {
			t.Errorf("object %d: got %s, want %s", i, got, w.Raw)
		}
	}
	if got, want := eventSummary(snap.Events), "ADDED a/y@2 prev=-, MODIFIED a/y@3 prev=2"; got != want {
		t.Errorf("got events [%s], want [%s]", got, want)
	}
	for i, e := range snap.Events {
		if want := obj("a", "y", uint64(i+2)).Raw; string(e.Object.Raw) != string(want) {
			t.Errorf("event %d: got raw %s, want %s", i, e.Object.Raw, want)
		}
	}
}
