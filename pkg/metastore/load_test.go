package metastore

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
)

// TestLoadConsistentWhileApplying runs readers against a writer. Batch k
// sets object "counter" to k, adds object "item-k" and sets watermark k, so
// every consistent snapshot has counter == watermark == number of items.
func TestLoadConsistentWhileApplying(t *testing.T) {
	const (
		batches = 50 // writes per run
		readers = 6  // more than readerMaxConns, so readers also queue
	)
	s := MustOpen(t, testDBPath(t))
	ctx := context.Background()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for k := uint64(1); k <= batches; k++ {
			counter := Object{Namespace: "ns", Name: "counter", RV: k, Raw: []byte(strconv.FormatUint(k, 10))}
			item := obj("ns", fmt.Sprintf("item-%04d", k), k)
			if err := s.Apply(ctx, "pods", ops(upsert(counter), upsert(item)), k); err != nil {
				t.Errorf("Apply(%d): got error %v, want nil", k, err)
				return
			}
		}
	})
	for range readers {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := checkSnapshot(ctx, s); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := checkSnapshot(ctx, s); err != nil {
		t.Fatal(err)
	}
	if final, _ := MustLoad(t, s, "pods"); len(final) != batches+1 {
		t.Fatalf("objects after all batches: got %d, want %d", len(final), batches+1)
	}
}

// checkSnapshot loads pods and checks counter == watermark == items.
func checkSnapshot(ctx context.Context, s *Store) error {
	got, wm, err := s.Load(ctx, "pods")
	if err != nil {
		return fmt.Errorf("Load: got error %v, want nil", err)
	}
	if wm == 0 {
		if len(got) != 0 {
			return fmt.Errorf("Load at watermark 0: got %d objects, want 0", len(got))
		}
		return nil
	}
	if want := int(wm) + 1; len(got) != want {
		return fmt.Errorf("Load at watermark %d: got %d objects, want %d", wm, len(got), want)
	}
	// "counter" sorts before every "item-".
	if c := got[0]; c.Name != "counter" || string(c.Raw) != strconv.FormatUint(wm, 10) {
		return fmt.Errorf("Load at watermark %d: got first object %s, want counter=%d", wm, describe(c), wm)
	}
	return nil
}
