package metastore

import (
	"context"
	"fmt"
	"testing"
)

// StreamSnapshot hands over the same objects, in the same order, as
// LoadSnapshot, in slices no larger than asked, with the same watermark,
// events and floor.
func TestStreamSnapshot(t *testing.T) {
	const stored = 10 // objects
	s := MustOpen(t, testDBPath(t))
	ctx := context.Background()
	var batch []Op
	for i := range stored {
		batch = append(batch, upsert(obj("ns", fmt.Sprintf("o-%02d", i), uint64(i+1))))
	}
	MustApply(t, s, "pods", batch, stored)
	MustApply(t, s, "pods", ops(upsert(obj("ns", "o-03", stored+1))), stored+1) // one logged event
	want, err := s.LoadSnapshot(ctx, "pods")
	if err != nil {
		t.Fatalf("LoadSnapshot: %v", err)
	}
	for _, tc := range []struct {
		name       string
		chunk      int
		wantChunks int
	}{
		{"all at once", 0, 1},
		{"one by one", 1, stored},
		{"uneven slices", 3, 4},
		{"larger than the set", 100, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []Object
			chunks := 0
			snap, err := s.StreamSnapshot(ctx, "pods", tc.chunk, func(o []Object) {
				if tc.chunk > 0 && len(o) > tc.chunk {
					t.Errorf("slice of %d objects, want at most %d", len(o), tc.chunk)
				}
				chunks++
				got = append(got, o...)
			})
			if err != nil {
				t.Fatalf("StreamSnapshot: %v", err)
			}
			if d := diffObjects(got, want.Objects); d != "" {
				t.Errorf("objects: %s", d)
			}
			if chunks != tc.wantChunks {
				t.Errorf("got %d slices, want %d", chunks, tc.wantChunks)
			}
			if snap.Objects != nil || snap.Watermark != want.Watermark || snap.LogFloor != want.LogFloor || len(snap.Events) != len(want.Events) {
				t.Errorf("got %d objects, watermark %d, floor %d, %d events; want none, %d, %d, %d",
					len(snap.Objects), snap.Watermark, snap.LogFloor, len(snap.Events), want.Watermark, want.LogFloor, len(want.Events))
			}
		})
	}
	if n := len(want.Events); n != 1 {
		t.Errorf("LoadSnapshot: got %d events, want 1", n)
	}
}
