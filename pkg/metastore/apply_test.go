package metastore

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
)

// batch is one Apply call in a table test.
type batch struct {
	resource  string
	ops       []Op
	watermark uint64
}

// state is what Load must return for one resource.
type state struct {
	objs      []Object
	watermark uint64
}

func TestApplyLoad(t *testing.T) {
	tests := []struct {
		name    string
		batches []batch
		want    map[string]state
	}{{
		name: "round trip sorted by namespace then name",
		batches: []batch{{"pods", ops(
			upsert(obj("b", "x", 7)), upsert(obj("a", "z", 5)), upsert(obj("a", "y", 6)), upsert(obj("", "node-1", 4)),
		), 7}},
		want: map[string]state{"pods": {objs(obj("", "node-1", 4), obj("a", "y", 6), obj("a", "z", 5), obj("b", "x", 7)), 7}},
	}, {
		name: "upsert overwrites rv and raw",
		batches: []batch{
			{"pods", ops(upsert(obj("a", "x", 1))), 1},
			{"pods", ops(upsert(obj("a", "x", 9))), 9},
		},
		want: map[string]state{"pods": {objs(obj("a", "x", 9)), 9}},
	}, {
		name: "delete removes only the named object",
		batches: []batch{
			{"pods", ops(upsert(obj("a", "x", 1)), upsert(obj("a", "y", 2)), upsert(obj("b", "x", 3))), 3},
			{"pods", ops(del("a", "x")), 4},
		},
		want: map[string]state{"pods": {objs(obj("a", "y", 2), obj("b", "x", 3)), 4}},
	}, {
		name:    "delete of a missing object is not an error",
		batches: []batch{{"pods", ops(del("a", "ghost")), 2}},
		want:    map[string]state{"pods": {nil, 2}},
	}, {
		name:    "ops apply in order: upsert then delete",
		batches: []batch{{"pods", ops(upsert(obj("a", "x", 1)), del("a", "x")), 2}},
		want:    map[string]state{"pods": {nil, 2}},
	}, {
		name: "ops apply in order: delete then upsert",
		batches: []batch{
			{"pods", ops(upsert(obj("a", "x", 1))), 1},
			{"pods", ops(del("a", "x"), upsert(obj("a", "x", 3))), 3},
		},
		want: map[string]state{"pods": {objs(obj("a", "x", 3)), 3}},
	}, {
		name:    "empty batch only moves the watermark",
		batches: []batch{{"pods", ops(upsert(obj("a", "x", 1))), 1}, {"pods", nil, 50}},
		want:    map[string]state{"pods": {objs(obj("a", "x", 1)), 50}},
	}, {
		name: "resources are isolated",
		batches: []batch{
			{"pods", ops(upsert(obj("a", "x", 10))), 10},
			{"configmaps", ops(upsert(obj("a", "x", 11)), upsert(obj("a", "y", 12))), 12},
			{"configmaps", ops(del("a", "x")), 13},
		},
		want: map[string]state{
			"pods":       {objs(obj("a", "x", 10)), 10},
			"configmaps": {objs(obj("a", "y", 12)), 13},
			"secrets":    {nil, 0},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustOpen(t, testDBPath(t))
			for _, b := range tt.batches {
				MustApply(t, s, b.resource, b.ops, b.watermark)
			}
			for resource, want := range tt.want {
				wantLoad(t, s, resource, want.objs, want.watermark)
			}
		})
	}
}

func TestApplyWatermarkOrdering(t *testing.T) {
	const stored = 10
	base := objs(obj("a", "x", stored))
	tests := []struct {
		name      string
		watermark uint64
		wantErr   error
	}{
		{"lower is rejected", stored - 1, ErrWatermarkRegression},
		{"zero is rejected", 0, ErrWatermarkRegression},
		{"equal is accepted", stored, nil},
		{"higher is accepted", stored + 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustOpen(t, testDBPath(t))
			MustApply(t, s, "pods", ops(upsert(base[0])), stored)
			batch := ops(upsert(obj("a", "new", tt.watermark)), del("a", "x"))
			err := s.Apply(context.Background(), "pods", batch, tt.watermark)
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("Apply(watermark %d): got error %v, want %v", tt.watermark, err, tt.wantErr)
			}
			if tt.wantErr != nil {
				wantLoad(t, s, "pods", base, stored)
				return
			}
			wantLoad(t, s, "pods", objs(obj("a", "new", tt.watermark)), tt.watermark)
		})
	}
}

// poisonTriggerSQL makes any insert of an object named "poison" fail inside
// SQLite, forcing an error in the middle of a batch.
const poisonTriggerSQL = `CREATE TRIGGER poison BEFORE INSERT ON objects
WHEN NEW.name = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned object'); END`

func TestApplyFailureWritesNothing(t *testing.T) {
	const stored = 5
	base := objs(obj("a", "keep", 1), obj("a", "victim", 2))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name      string
		ctx       context.Context
		ops       []Op
		watermark uint64
		wantErr   error // nil: any error will do
	}{
		{"cancelled context", cancelled, ops(upsert(obj("a", "new", 6))), stored + 1, context.Canceled},
		{"sqlite error mid-batch", context.Background(), ops(
			upsert(obj("a", "new", 6)), del("a", "victim"), upsert(obj("a", "poison", 6)), upsert(obj("a", "late", 6)),
		), stored + 1, nil},
		{"rv out of range mid-batch", context.Background(), ops(
			upsert(obj("a", "new", 6)), del("a", "victim"), upsert(obj("a", "huge", math.MaxUint64)),
		), stored + 1, errOutOfRange},
		{"empty name mid-batch", context.Background(), ops(
			upsert(obj("a", "new", 6)), del("a", "victim"), upsert(obj("a", "", 6)),
		), stored + 1, nil},
		{"watermark out of range", context.Background(), ops(upsert(obj("a", "new", 6))), math.MaxUint64, errOutOfRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := testDBPath(t)
			s := MustOpen(t, path)
			MustApply(t, s, "pods", ops(upsert(base[0]), upsert(base[1])), stored)
			if _, err := MustRawDB(t, path).Exec(poisonTriggerSQL); err != nil {
				t.Fatalf("create trigger: got error %v, want nil", err)
			}
			err := s.Apply(tt.ctx, "pods", tt.ops, tt.watermark)
			if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Fatalf("Apply: got error %v, want %v", err, cmpErr(tt.wantErr))
			}
			wantLoad(t, s, "pods", base, stored)
			// The failed transaction released the writer.
			MustApply(t, s, "pods", ops(del("a", "victim")), stored+1)
			wantLoad(t, s, "pods", base[:1], stored+1)
		})
	}
}

// cmpErr names the expected error in messages.
func cmpErr(err error) any {
	if err == nil {
		return "an error"
	}
	return err
}

func TestDrop(t *testing.T) {
	s := MustOpen(t, testDBPath(t))
	MustApply(t, s, "pods", ops(upsert(obj("a", "x", 3))), 3)
	MustApply(t, s, "configmaps", ops(upsert(obj("a", "x", 4))), 4)
	if err := s.Drop(context.Background(), "pods"); err != nil {
		t.Fatalf("Drop: got error %v, want nil", err)
	}
	wantLoad(t, s, "pods", nil, 0)
	wantLoad(t, s, "configmaps", objs(obj("a", "x", 4)), 4)
	got, err := s.Resources(context.Background())
	if err != nil || !slices.Equal(got, []string{"configmaps"}) {
		t.Fatalf("Resources: got %v, %v, want [configmaps], nil", got, err)
	}
	// A dropped resource starts over from any watermark.
	MustApply(t, s, "pods", ops(upsert(obj("a", "y", 1))), 1)
	wantLoad(t, s, "pods", objs(obj("a", "y", 1)), 1)
}

func TestResources(t *testing.T) {
	s := MustOpen(t, testDBPath(t))
	got, err := s.Resources(context.Background())
	if err != nil || len(got) != 0 {
		t.Fatalf("Resources on empty store: got %v, %v, want [], nil", got, err)
	}
	for i, r := range []string{"services", "pods", "configmaps"} {
		MustApply(t, s, r, nil, uint64(i+1))
	}
	got, err = s.Resources(context.Background())
	if want := []string{"configmaps", "pods", "services"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("Resources: got %v, %v, want %v, nil", got, err, want)
	}
}

func TestWatermark(t *testing.T) {
	s := MustOpen(t, testDBPath(t))
	MustApply(t, s, "pods", nil, 42)
	for _, tt := range []struct {
		resource string
		want     uint64
	}{{"pods", 42}, {"never-synced", 0}} {
		t.Run(tt.resource, func(t *testing.T) {
			_, got, err := s.Load(context.Background(), tt.resource)
			if err != nil || got != tt.want {
				t.Fatalf("Load(%s): got watermark %d, %v, want %d, nil", tt.resource, got, err, tt.want)
			}
		})
	}
}

func TestApplyRejectsEmptyResource(t *testing.T) {
	s := MustOpen(t, testDBPath(t))
	if err := s.Apply(context.Background(), "", ops(upsert(obj("a", "x", 1))), 1); err == nil {
		t.Fatalf("Apply with empty resource: got nil error, want an error")
	}
	got, err := s.Resources(context.Background())
	if err != nil || len(got) != 0 {
		t.Fatalf("Resources after rejected Apply: got %v, %v, want [], nil", got, err)
	}
}
