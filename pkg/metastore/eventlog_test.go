package metastore

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// mustOpenWith opens path with opts and closes it when the test ends.
func mustOpenWith(t *testing.T, path string, opts Options) *Store {
	t.Helper()
	s, err := openWith(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("open %s: got error %v, want nil", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// mustSnapshot loads resource's snapshot.
func mustSnapshot(t *testing.T, s *Store, resource string) Snapshot {
	t.Helper()
	snap, err := s.LoadSnapshot(context.Background(), resource)
	if err != nil {
		t.Fatalf("LoadSnapshot(%s): got error %v, want nil", resource, err)
	}
	return snap
}

// delAt builds a delete op carrying the object's last state at rv, as the
// sync sends it.
func delAt(ns, name string, rv uint64) Op { return Op{Delete: true, Object: obj(ns, name, rv)} }

// eventSummary formats events as "TYPE ns/name@rv prev=<rv or ->".
func eventSummary(events []Event) string {
	var out []string
	for _, e := range events {
		prev := "-"
		if e.Prev != nil {
			prev = string(e.Prev[bytes.LastIndex(e.Prev, []byte(`"resourceVersion":"`))+19:])
			prev = strings.TrimSuffix(prev, `"}}`)
		}
		out = append(out, fmt.Sprintf("%s %s/%s@%d prev=%s", e.Type, e.Object.Namespace, e.Object.Name, e.Object.RV, prev))
	}
	return strings.Join(out, ", ")
}

func TestEventLog(t *testing.T) {
	s := mustOpenWith(t, testDBPath(t), Options{EventLogSize: 4})
	steps := []struct {
		name       string
		ops        []Op
		wm         uint64
		wantEvents string
		wantFloor  uint64
	}{
		{"first sync starts the log at its watermark",
			ops(upsert(obj("a", "x", 1)), upsert(obj("a", "y", 2))), 5, "", 5},
		{"events after the watermark are logged with their previous state",
			ops(upsert(obj("a", "z", 6)), upsert(obj("a", "x", 7)), delAt("a", "y", 8)), 8,
			"ADDED a/z@6 prev=-, MODIFIED a/x@7 prev=1, DELETED a/y@8 prev=2", 5},
		{"a progress-only batch keeps the log", nil, 9,
			"ADDED a/z@6 prev=-, MODIFIED a/x@7 prev=1, DELETED a/y@8 prev=2", 5},
		{"the log keeps the newest events; the floor rises to the newest trimmed",
			ops(upsert(obj("a", "x", 10)), upsert(obj("a", "x", 11))), 11,
			"MODIFIED a/x@7 prev=1, DELETED a/y@8 prev=2, MODIFIED a/x@10 prev=7, MODIFIED a/x@11 prev=10", 6},
		{"a batch at or below the watermark restarts the log",
			ops(upsert(obj("a", "w", 3))), 12, "", 12},
		{"events sharing an RV, as a relist's deletes do, are logged",
			ops(delAt("a", "w", 13), delAt("a", "z", 13)), 13, "DELETED a/w@13 prev=3, DELETED a/z@13 prev=6", 12},
		{"a delete without the object's state restarts the log",
			ops(del("a", "x")), 14, "", 14},
	}
	for _, st := range steps {
		MustApply(t, s, "pods", st.ops, st.wm)
		snap := mustSnapshot(t, s, "pods")
		if got := eventSummary(snap.Events); got != st.wantEvents || snap.LogFloor != st.wantFloor || snap.Watermark != st.wm {
			t.Fatalf("%s: got events [%s] floor %d watermark %d, want [%s] floor %d watermark %d",
				st.name, got, snap.LogFloor, snap.Watermark, st.wantEvents, st.wantFloor, st.wm)
		}
	}
}

// A failed batch logs nothing; Drop empties the log.
func TestEventLogFollowsTransactions(t *testing.T) {
	ctx := context.Background()
	s := mustOpenWith(t, testDBPath(t), Options{})
	MustApply(t, s, "pods", nil, 1)
	MustApply(t, s, "pods", ops(upsert(obj("a", "x", 2))), 2)
	if err := s.Apply(ctx, "pods", ops(upsert(obj("a", "y", 3)), upsert(Object{Namespace: "a"})), 3); err == nil {
		t.Fatal("Apply with an unnamed object: got nil error, want one")
	}
	if got := eventSummary(mustSnapshot(t, s, "pods").Events); got != "ADDED a/x@2 prev=-" {
		t.Fatalf("after a failed batch: got events [%s], want [ADDED a/x@2 prev=-]", got)
	}
	if err := s.Drop(ctx, "pods"); err != nil {
		t.Fatal(err)
	}
	if snap := mustSnapshot(t, s, "pods"); len(snap.Events) != 0 || snap.LogFloor != 0 || snap.Watermark != 0 {
		t.Fatalf("after Drop: got %+v, want an empty snapshot", snap)
	}
}

// A logged event that does not decode is skipped with the events before
// it, and the floor rises past it, so no watch resumes across the gap.
func TestEventLogSkipsUndecodableRow(t *testing.T) {
	path := testDBPath(t)
	var logs bytes.Buffer
	s := mustOpenWith(t, path, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	MustApply(t, s, "pods", nil, 1)
	MustApply(t, s, "pods", ops(upsert(obj("a", "x", 2))), 2)
	raw := MustRawDB(t, path)
	if _, err := raw.Exec(`INSERT INTO events (resource, type, rv, namespace, name, raw) VALUES ('pods', 'ADDED', 'bad', 'a', 'q', x'00')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	MustApply(t, s, "pods", ops(upsert(obj("a", "y", 3))), 3)
	MustApply(t, s, "pods", ops(upsert(obj("a", "z", 4))), 4)
	snap := mustSnapshot(t, s, "pods")
	if got := eventSummary(snap.Events); got != "ADDED a/z@4 prev=-" || snap.LogFloor != 3 {
		t.Fatalf("got events [%s] floor %d, want [ADDED a/z@4 prev=-] floor 3", got, snap.LogFloor)
	}
	if !strings.Contains(logs.String(), "skipping undecodable logged event") {
		t.Errorf("got log %q, want a line about the skipped event", logs.String())
	}
}

// A database of schema version 1 upgrades with its state kept, its log
// empty and its floor at its watermark.
func TestUpgradeFromVersion1(t *testing.T) {
	path := testDBPath(t)
	raw := MustRawDB(t, path)
	for _, q := range []string{
		migrations[0],
		`CREATE TABLE schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`,
		`INSERT INTO schema_version VALUES (1, 1)`,
		`INSERT INTO sync_state VALUES ('pods', 7)`,
		fmt.Sprintf(`INSERT INTO objects VALUES ('pods', 'a', 'x', 7, '%s')`, obj("a", "x", 7).Raw),
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("build a version 1 database: %v", err)
		}
	}
	raw.Close()
	s := mustOpenWith(t, path, Options{})
	if v := rawSchemaVersion(t, path); v != len(migrations) {
		t.Fatalf("schema version after upgrade: got %d, want %d", v, len(migrations))
	}
	snap := mustSnapshot(t, s, "pods")
	if snap.Watermark != 7 || snap.LogFloor != 7 || len(snap.Events) != 0 || len(snap.Objects) != 1 {
		t.Fatalf("after upgrade: got %+v, want the object at watermark 7, floor 7, no events", snap)
	}
	MustApply(t, s, "pods", ops(upsert(obj("a", "x", 8))), 8)
	if got := eventSummary(mustSnapshot(t, s, "pods").Events); got != "MODIFIED a/x@8 prev=7" {
		t.Fatalf("after upgrade: got events [%s], want [MODIFIED a/x@8 prev=7]", got)
	}
}
