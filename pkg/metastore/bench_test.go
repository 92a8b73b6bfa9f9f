package metastore

import (
	"context"
	"fmt"
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
