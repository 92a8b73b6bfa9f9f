package metastore

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// benchNames (objects) is the key space benchmark batches cycle through.
const benchNames = 10000

func BenchmarkApply(b *testing.B) {
	for _, size := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			s := MustOpen(b, testDBPath(b))
			ctx := context.Background()
			batch := make([]Op, size)
			var wm uint64
			for b.Loop() {
				for i := range batch {
					n := int(wm)*size + i
					batch[i] = upsert(obj(fmt.Sprintf("ns-%d", n%10), fmt.Sprintf("obj-%d", n%benchNames), wm+1))
				}
				wm++
				if err := s.Apply(ctx, "pods", batch, wm); err != nil {
					b.Fatalf("Apply: got error %v, want nil", err)
				}
			}
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "objects/s")
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	const (
		objects   = 10000 // stored objects loaded per iteration
		batchSize = 1000  // objects per setup batch
	)
	s := MustOpen(b, testDBPath(b))
	for start := 0; start < objects; start += batchSize {
		batch := make([]Op, 0, batchSize)
		for i := start; i < start+batchSize; i++ {
			batch = append(batch, upsert(obj(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("obj-%05d", i), uint64(i+1))))
		}
		MustApply(b, s, "pods", batch, uint64(start+batchSize))
	}
	ctx := context.Background()
	for b.Loop() {
		got, _, err := s.Load(ctx, "pods")
		if err != nil || len(got) != objects {
			b.Fatalf("Load: got %d objects, %v, want %d, nil", len(got), err, objects)
		}
	}
}

// BenchmarkLoadSnapshot restores a full event log of pod-sized objects,
// each event with its previous state; B/op shows the bytes a restore
// allocates for it.
func BenchmarkLoadSnapshot(b *testing.B) {
	const (
		objects = 100     // stored objects, each modified events/objects times
		podSize = 9 << 10 // bytes of padding per object, a typical pod's JSON
		events  = 1000    // logged events, DefaultEventLogSize
	)
	s := MustOpen(b, testDBPath(b))
	pad := strings.Repeat("x", podSize)
	sized := func(i int, rv uint64) Op {
		o := obj("ns", fmt.Sprintf("obj-%03d", i), rv)
		o.Raw = append(o.Raw[:len(o.Raw)-1:len(o.Raw)-1], `,"pad":"`+pad+`"}`...)
		return upsert(o)
	}
	var batch []Op
	for i := range objects {
		batch = append(batch, sized(i, uint64(i+1)))
	}
	MustApply(b, s, "pods", batch, objects)
	for rv := uint64(objects + 1); rv <= objects+events; rv++ {
		MustApply(b, s, "pods", ops(sized(int(rv)%objects, rv)), rv)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		snap, err := s.LoadSnapshot(ctx, "pods")
		if err != nil || len(snap.Events) != events {
			b.Fatalf("LoadSnapshot: got %d events, %v, want %d, nil", len(snap.Events), err, events)
		}
	}
}
