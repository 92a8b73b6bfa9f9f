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
